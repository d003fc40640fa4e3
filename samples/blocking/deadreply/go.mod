module deadreply

go 1.22
