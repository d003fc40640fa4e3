module deepvisit

go 1.22
