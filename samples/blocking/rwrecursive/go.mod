module rwrecursive

go 1.22
