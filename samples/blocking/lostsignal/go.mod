module lostsignal

go 1.22
