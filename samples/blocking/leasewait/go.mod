module leasewait

go 1.22
