module wgmissingdone

go 1.22
