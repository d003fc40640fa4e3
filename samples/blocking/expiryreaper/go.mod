module expiryreaper

go 1.22
