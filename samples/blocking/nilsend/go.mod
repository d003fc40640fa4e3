module nilsend

go 1.22
