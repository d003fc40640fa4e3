module poolexhausted

go 1.22
