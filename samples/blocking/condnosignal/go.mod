module condnosignal

go 1.22
