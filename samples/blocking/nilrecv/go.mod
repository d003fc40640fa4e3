module nilrecv

go 1.22
