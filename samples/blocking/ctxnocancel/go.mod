module ctxnocancel

go 1.22
