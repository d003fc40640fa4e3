module globalwg

go 1.22
