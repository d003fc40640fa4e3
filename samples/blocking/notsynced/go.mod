module notsynced

go 1.22
