module wgaddcount

go 1.22
