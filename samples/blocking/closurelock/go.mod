module closurelock

go 1.22
