module testmainsleep

go 1.22
