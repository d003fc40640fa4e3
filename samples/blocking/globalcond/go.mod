module globalcond

go 1.22
