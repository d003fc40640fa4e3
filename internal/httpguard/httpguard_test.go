package httpguard

import (
	"net/http/httptest"
	"testing"
)

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:9464": true, "localhost:1": true, "[::1]:80": true, "a.localhost": true,
		"evil.example:9464": false, "10.0.0.1:80": false, "127.0.0.1.nip.io:80": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v", host, got)
		}
	}
}

func TestSameOriginAndToken(t *testing.T) {
	if !SameOrigin("http://127.0.0.1:9464", "127.0.0.1:9464") || SameOrigin("http://evil.example", "127.0.0.1:9464") || SameOrigin("null", "x") {
		t.Error("SameOrigin")
	}
	r := httptest.NewRequest("POST", "/", nil)
	if TokenOK(r, "X-T", "") {
		t.Error("empty token matched")
	}
	r.Header.Set("Authorization", "Bearer s3")
	if !TokenOK(r, "", "s3") || TokenOK(r, "", "s4") {
		t.Error("bearer token")
	}
	r = httptest.NewRequest("POST", "/", nil)
	r.Header.Set("X-T", "s3")
	if !TokenOK(r, "X-T", "s3") || TokenOK(r, "", "s3") {
		t.Error("header token")
	}
}
