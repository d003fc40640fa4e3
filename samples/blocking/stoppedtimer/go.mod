module stoppedtimer

go 1.22
