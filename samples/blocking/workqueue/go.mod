module workqueue

go 1.22
