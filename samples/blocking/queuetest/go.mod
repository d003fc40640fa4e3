module queuetest

go 1.22
