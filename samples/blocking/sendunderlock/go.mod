module sendunderlock

go 1.22
