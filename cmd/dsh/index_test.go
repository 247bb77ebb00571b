package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

func TestIndexStatusAndRebuild(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	before := s.run("index", "status", "--json")
	wantOK(t, before)
	var st struct {
		Path        string `json:"path"`
		Sessions    int    `json:"sessions"`
		Events      int    `json:"events"`
		SizeBytes   int64  `json:"sizeBytes"`
		LagSessions int    `json:"lagSessions"`
	}
	if err := json.Unmarshal([]byte(before.stdout), &st); err != nil {
		t.Fatal(err)
	}
	if st.Sessions != 0 || st.LagSessions != 3 || !strings.HasSuffix(st.Path, "session-query.db") {
		t.Errorf("before: %+v", st)
	}
	r := s.run("index", "rebuild")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Rebuilt") || !strings.Contains(r.stdout, "3 sessions") {
		t.Errorf("rebuild stdout: %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "indexing sessions: 3/3") {
		t.Errorf("rebuild progress: %q", r.stderr)
	}
	after := s.run("index", "status")
	wantOK(t, after)
	for _, want := range []string{"sessions  3", "events    ", "size      ", "lag       none"} {
		if !strings.Contains(after.stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, after.stdout)
		}
	}
	s.logs().add(s.header("later"), 30, turn{prompt: "one more", reply: "ok"})
	lag := s.run("index", "status")
	wantOK(t, lag)
	if !strings.Contains(lag.stdout, "1 session changed") {
		t.Errorf("lag:\n%s", lag.stdout)
	}
}

func TestHumanBytes(t *testing.T) {
	for in, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 5 << 20: "5.0 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanBytes(in); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestProgressDrawsOnlyPlainLinesOffATerminal(t *testing.T) {
	var b strings.Builder
	p := newProgress(&b, "work").plainLines()
	for i := 0; i <= 100; i++ {
		p.update(i, 100)
	}
	p.done()
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 11 || lines[0] != "work: 0/100" || lines[10] != "work: 100/100" || strings.Contains(b.String(), "\r") {
		t.Errorf("progress:\n%q", b.String())
	}
	var quiet strings.Builder
	q := newProgress(&quiet, "work")
	q.update(5, 10)
	q.done()
	if quiet.Len() != 0 {
		t.Errorf("a search wrote progress off a terminal: %q", quiet.String())
	}
}

func TestIndexVerifyReportsAndRepairsDrift(t *testing.T) {
	s := newSandbox(t)
	populate(s)
	r := s.run("index", "verify")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "Checked 3 session logs: 3 missing; the index is repaired.") {
		t.Errorf("first verify: %q", r.stdout)
	}
	// A log edited in place behind dsh's back: a line appended by hand.
	entry, err := s.logs().st.Stat(t.Context(), "older")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(entry.Path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"todo/write","seq":9,"time":1749981700000,"data":{"todos":[]}}` + "\n"
	if _, err := f.WriteString(line); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r = s.run("index", "verify", "--json")
	wantOK(t, r)
	var rep struct {
		Sessions int      `json:"sessions"`
		Added    []string `json:"added"`
		Changed  []string `json:"changed"`
		Removed  []string `json:"removed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 3 || len(rep.Added) != 0 || len(rep.Changed) != 1 || rep.Changed[0] != "older" || len(rep.Removed) != 0 {
		t.Errorf("after an edit: %+v", rep)
	}
	r = s.run("index", "verify")
	wantOK(t, r)
	if !strings.Contains(r.stdout, "the index is up to date") {
		t.Errorf("after the repair: %q", r.stdout)
	}
}
