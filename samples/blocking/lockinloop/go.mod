module lockinloop

go 1.22
