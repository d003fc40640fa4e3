module globalchan

go 1.22
