module standby

go 1.22
