module lockwhilesend

go 1.22
