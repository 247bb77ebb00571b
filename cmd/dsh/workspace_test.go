package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// TestEveryCommandScopesToTheSameWorkspace runs dsh from several spellings
// of one workspace and checks that sessions list, sessions search and the
// session-id completion agree on which sessions are here: the rule of
// session.Workspace, where the directory dsh runs in is cleaned and its
// symbolic links resolved, and a stored cwd must be one of those forms.
func TestEveryCommandScopesToTheSameWorkspace(t *testing.T) {
	s := newSandbox(t)
	root := filepath.Dir(s.cwd)
	link := filepath.Join(root, "link")
	if err := os.Symlink(s.cwd, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := s.logs()
	l.add(s.header("aa-real"), 0, turn{prompt: "tune the needle cache", reply: "ok"})
	l.add(session.Header{ID: "ab-link", Cwd: &link}, 1, turn{prompt: "needle through the link", reply: "ok"})
	l.add(elsewhere("ac-else"), 2, turn{prompt: "needle elsewhere", reply: "ok"})

	real, both := []string{"aa-real"}, []string{"aa-real", "ab-link"}
	for _, tc := range []struct {
		name, cwd string
		want      []string
	}{
		{"the real path", s.cwd, real},
		{"a trailing slash", s.cwd + "/", real},
		{"a .. step", filepath.Join(root, "sub") + "/../project", real},
		{"through the link", link, both},
		{"through the link with a trailing slash", link + "/", both},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.cwd = tc.cwd
			if got := listedIDs(t, s); !slices.Equal(got, tc.want) {
				t.Errorf("sessions list: %v, want %v", got, tc.want)
			}
			if got := searchedIDs(t, s, "needle"); !slices.Equal(got, tc.want) {
				t.Errorf("sessions search: %v, want %v", got, tc.want)
			}
			if got := completedHere(t, s, "a"); !slices.Equal(got, tc.want) {
				t.Errorf("completion offers as this workspace's: %v, want %v", got, tc.want)
			}
		})
	}
}

func listedIDs(t *testing.T, s *sandbox) []string {
	t.Helper()
	r := s.run("sessions", "list", "--json")
	wantOK(t, r)
	var rows []struct{ ID string }
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var ids []string
	for _, row := range rows {
		ids = append(ids, row.ID)
	}
	slices.Sort(ids)
	return ids
}

func searchedIDs(t *testing.T, s *sandbox, query string) []string {
	t.Helper()
	r := s.run("sessions", "search", query, "--json")
	wantOK(t, r)
	var hits []struct {
		Session struct{ ID string } `json:"session"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &hits); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.Session.ID)
	}
	slices.Sort(ids)
	return ids
}

// completedHere returns the completed session ids offered as this
// workspace's: those whose description names no other workspace.
func completedHere(t *testing.T, s *sandbox, prefix string) []string {
	t.Helper()
	r := s.run("__complete", "sessions", "show", prefix)
	wantOK(t, r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var ids []string
	for _, line := range lines[:len(lines)-1] {
		id, desc, _ := strings.Cut(line, "\t")
		if !strings.HasSuffix(desc, ")") {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
