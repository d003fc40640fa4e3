module sleepersend

go 1.22
