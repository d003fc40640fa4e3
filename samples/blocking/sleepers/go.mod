module sleepers

go 1.22
