module feederclosure

go 1.22
