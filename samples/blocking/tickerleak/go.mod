module tickerleak

go 1.22
