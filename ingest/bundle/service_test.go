package bundle

import "testing"

// TestIdentity: one rule names a capture's service and build, and an
// unknown one is "", never a made-up name.
func TestIdentity(t *testing.T) {
	for _, c := range []struct {
		t              Target
		service, build string
	}{
		{Target{Exe: "/usr/bin/operator", ModulePath: "example.com/op", ModuleVersion: "v1.4.2", VCSRevision: "3f2a9c0e71bd44aa"}, "operator", "v1.4.2 3f2a9c0e71bd"},
		{Target{ModulePath: "example.com/op", ModuleVersion: "v0.0.0-20261206094100-3f2a9c0e71bd", VCSRevision: "3f2a9c0e71bd44aa"}, "example.com/op", "v0.0.0-20261206094100-3f2a9c0e71bd"},
		{Target{Exe: "/op", ModuleVersion: "(devel)", VCSRevision: "3f2a9c0e71bd44aa", VCSModified: true}, "op", "3f2a9c0e71bd+modified"},
		{Target{Exe: "/op", ModuleVersion: "(devel)", BuildID: "8Ph0tHU_t0AUHsGMXdqi/7fX7"}, "op", "id 8Ph0tHU_t0AU"},
		{Target{}, "", ""},
	} {
		if got := c.t.Service(); got != c.service {
			t.Errorf("%+v: service %q, want %q", c.t, got, c.service)
		}
		if got := c.t.Build(); got != c.build {
			t.Errorf("%+v: build %q, want %q", c.t, got, c.build)
		}
	}
	if OrUnknown("") != Unknown || OrUnknown("vm") != "vm" {
		t.Error("OrUnknown")
	}
}
