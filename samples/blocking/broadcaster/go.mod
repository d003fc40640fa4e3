module broadcaster

go 1.22
