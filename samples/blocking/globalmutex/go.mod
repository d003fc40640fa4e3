module globalmutex

go 1.22
