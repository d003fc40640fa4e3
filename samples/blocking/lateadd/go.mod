module lateadd

go 1.22
