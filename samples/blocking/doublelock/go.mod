module doublelock

go 1.22
