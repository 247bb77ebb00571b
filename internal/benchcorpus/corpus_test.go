package benchcorpus

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

func generate(t *testing.T, opts Options) (*store.Store, Manifest) {
	t.Helper()
	st := store.New(filepath.Join(t.TempDir(), "sessions"), store.Options{})
	m, err := Generate(context.Background(), st, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st, m
}

func readAll(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() || filepath.Base(p) != "session.jsonl" {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	opts := Options{Sessions: 25, Seed: 7, TurnsMin: 1, TurnsMax: 4}
	a, ma := generate(t, opts)
	b, mb := generate(t, opts)
	fa, fb := readAll(t, a.Root()), readAll(t, b.Root())
	if len(fa) != 25 || len(fa) != len(fb) || ma.Events != mb.Events {
		t.Fatalf("files %d/%d, events %d/%d", len(fa), len(fb), ma.Events, mb.Events)
	}
	for k, v := range fa {
		if !bytes.Equal(v, fb[k]) {
			t.Fatalf("%s differs between two runs with the same seed", k)
		}
	}
	c, _ := generate(t, Options{Sessions: 25, Seed: 8, TurnsMin: 1, TurnsMax: 4})
	same := 0
	for k := range readAll(t, c.Root()) {
		if _, ok := fa[k]; ok {
			same++
		}
	}
	if same == 25 {
		t.Error("a different seed produced the same sessions")
	}
}

func TestGeneratedLogsAreValidAndPlantTheRareIDOnce(t *testing.T) {
	st, m := generate(t, Options{Sessions: 60, Seed: 3, TurnsMin: 2, TurnsMax: 8})
	ctx := context.Background()
	entries, err := st.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 60 || len(m.IDs) != 60 {
		t.Fatalf("listed %d sessions, manifest %d", len(entries), len(m.IDs))
	}
	rare, events, forks, compactions, tools := 0, 0, 0, 0, 0
	types := map[string]int{}
	for _, e := range entries {
		h, log, err := st.Inspect(ctx, e.Header.ID)
		if err != nil {
			t.Fatal(err)
		}
		if err := session.ValidateLog(h, log); err != nil {
			t.Fatalf("session %s: %v", h.ID, err)
		}
		docs, err := sessionquery.BuildDocuments(h.ID, log)
		if err != nil {
			t.Fatalf("session %s: %v", h.ID, err)
		}
		for _, d := range docs {
			rare += strings.Count(d.Text, RareID)
		}
		if h.ParentSession != nil {
			forks++
		}
		for _, ev := range log {
			types[ev.Type]++
			if ev.Type == session.TypeUserMessage {
				if op, _ := ev.Op(); op.Replace {
					compactions++
				}
			}
			if ev.Type == session.TypeToolResult {
				tools++
			}
		}
		events += len(log)
	}
	if rare != 1 {
		t.Errorf("%s occurs %d times, want exactly once", RareID, rare)
	}
	if events != m.Events {
		t.Errorf("manifest says %d events, logs hold %d", m.Events, events)
	}
	if forks == 0 || compactions == 0 || tools == 0 {
		t.Errorf("forks %d, compactions %d, tool results %d: want some of each", forks, compactions, tools)
	}
	for _, typ := range []string{session.TypeAssistantChunk, session.TypeRequestHeader, session.TypeTodoWrite, session.TypeSessionTitle, session.TypeEndSeed} {
		if types[typ] == 0 {
			t.Errorf("no %s events", typ)
		}
	}
	if per := events / 60; per < 60 || per > 400 {
		t.Errorf("%d events per session on average; the presets assume about 200", per)
	}
}

// SessionIn is one valid session of the corpus's shape, of the size asked,
// in the workspace and with the id asked, the same for the same seed.
func TestSessionInIsOneValidSessionOfTheSizeAsked(t *testing.T) {
	h, log := SessionIn(7, "00000000-0000-4000-8000-000000000500", "/work/project", 500)
	if err := session.ValidateLog(h, log); err != nil {
		t.Fatal(err)
	}
	if h.ID != "00000000-0000-4000-8000-000000000500" || h.CwdOrEmpty() != "/work/project" {
		t.Errorf("header = %+v", h)
	}
	if n := len(log); n < 500 || n > 700 {
		t.Errorf("%d events, want about 500", n)
	}
	tools := 0
	for _, e := range log {
		if e.Type == session.TypeToolResult {
			tools++
		}
	}
	if tools == 0 {
		t.Error("no tool results: not the corpus's shape")
	}
	h2, log2 := SessionIn(7, h.ID, "/work/project", 500)
	a, _ := session.Marshal(struct {
		H session.Header
		L []session.Event
	}{h, log})
	b, _ := session.Marshal(struct {
		H session.Header
		L []session.Event
	}{h2, log2})
	if !bytes.Equal(a, b) {
		t.Error("the same seed gave another session")
	}
}
