module collector

go 1.22
