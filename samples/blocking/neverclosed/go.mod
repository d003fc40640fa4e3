module neverclosed

go 1.22
