module keepalive

go 1.22
