module waitinworker

go 1.22
