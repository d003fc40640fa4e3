module rlockwait

go 1.22
