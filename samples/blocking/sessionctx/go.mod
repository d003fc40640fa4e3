module sessionctx

go 1.22
