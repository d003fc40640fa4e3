module selectforever

go 1.22
