module oncewait

go 1.22
