package configs

import (
	"slices"
	"testing"
)

func TestProfilesListsShippedProfiles(t *testing.T) {
	got := Profiles()
	for _, want := range []string{"default", "session-query"} {
		if !slices.Contains(got, want) {
			t.Errorf("Profiles() = %v, missing %q", got, want)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("Profiles() = %v, want sorted", got)
	}
}

func TestProfileLookup(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"default", true},
		{"session-query", true},
		{"missing", false},
		{"", false},
		{"../default", false},
		{"profiles/default", false},
	}
	for _, tt := range tests {
		b, ok := Profile(tt.name)
		if ok != tt.ok {
			t.Errorf("Profile(%q) ok = %v, want %v", tt.name, ok, tt.ok)
		}
		if ok && len(b) == 0 {
			t.Errorf("Profile(%q) returned no bytes", tt.name)
		}
	}
}

func TestDefaultIsEmbedded(t *testing.T) {
	if len(Default()) == 0 {
		t.Fatal("Default() is empty")
	}
}
