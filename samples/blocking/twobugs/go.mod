module twobugs

go 1.22
