module earlyreturn

go 1.22
