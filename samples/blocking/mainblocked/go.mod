module mainblocked

go 1.22
