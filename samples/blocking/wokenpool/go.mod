module wokenpool

go 1.22
