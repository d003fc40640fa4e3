module condfeeder

go 1.22
