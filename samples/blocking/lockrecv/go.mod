module lockrecv

go 1.22
