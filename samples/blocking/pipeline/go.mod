module pipeline

go 1.22
