module longpoll

go 1.22
