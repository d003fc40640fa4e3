module heldcallback

go 1.26.8

require golang.org/x/sync v0.24.0
