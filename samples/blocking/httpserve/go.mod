module httpserve

go 1.22
