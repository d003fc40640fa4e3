module streamleak

go 1.22
