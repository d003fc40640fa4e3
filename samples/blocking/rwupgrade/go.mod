module rwupgrade

go 1.22
