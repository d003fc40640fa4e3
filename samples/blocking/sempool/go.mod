module sempool

go 1.22
