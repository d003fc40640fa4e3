module blockforever

go 1.22
