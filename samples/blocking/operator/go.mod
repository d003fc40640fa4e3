module operator

go 1.22
