module example.com/racer

go 1.22
