module lockring

go 1.22
