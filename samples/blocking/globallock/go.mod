module globallock

go 1.22
