module subtest

go 1.22
