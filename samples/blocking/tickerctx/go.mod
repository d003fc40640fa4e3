module tickerctx

go 1.22
