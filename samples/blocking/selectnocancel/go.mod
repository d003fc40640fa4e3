module selectnocancel

go 1.22
