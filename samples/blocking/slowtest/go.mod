module slowtest

go 1.22
