module idlepool

go 1.22
