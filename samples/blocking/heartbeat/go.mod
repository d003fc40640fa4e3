module heartbeat

go 1.22
