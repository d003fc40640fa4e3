module leakscope.test/target

go 1.21
