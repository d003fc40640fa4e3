module abba

go 1.22
