module rangesleeper

go 1.22
