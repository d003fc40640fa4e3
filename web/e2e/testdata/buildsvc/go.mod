module example.com/buildsvc

go 1.22
