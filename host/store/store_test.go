package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestRoundTripKeepsBytesKeyOrderAndUnescapedText(t *testing.T) {
	fx := newFixture(t, Options{})
	h := testHeader("s-roundtrip")
	h.ParentSession = session.Ptr("s-parent")
	h.SeedLength = session.Ptr(1)
	seed := []session.Event{ev(0, session.TypeUserMessage,
		`{"content":[{"type":"text","text":"seeded <tag> — ok"}],"source":{"kind":"user"},"role":"user","id":"m0"}`)}
	w := mustCreate(t, fx.s, h, seed...)
	appended := []session.Event{
		ev(1, session.TypeEndSeed, `{}`),
		ev(2, session.TypeTurnStart, `{"turn":1}`),
		ev(3, session.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"delta":"<b>&amp; — \u2028"}}`),
	}
	appended[2].SourceEventSeqs = nil
	mustAppend(t, w, appended[:2]...)
	mustAppend(t, w, appended[2])
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	mustClose(t, w)

	raw := readFile(t, w.Path())
	goldie.New(t).Assert(t, "roundtrip", raw)
	for _, want := range []string{"<tag>", "—", "<b>&amp;"} {
		if !bytes.Contains(raw, []byte(want)) {
			t.Errorf("log does not contain %q verbatim", want)
		}
	}

	got, events, err := fx.s.Inspect(t.Context(), "s-roundtrip")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != h.ID || *got.ParentSession != "s-parent" || *got.SeedLength != 1 || got.Depth() != 0 {
		t.Errorf("header = %+v", got)
	}
	if got.DelegationDepth == nil {
		t.Error("delegationDepth must be present after a round trip (it is always written)")
	}
	sameEvents(t, events, append(seed, appended...))
}

func TestLayoutAndPermissions(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-perm"))
	mustClose(t, w)
	noCwd := testHeader("s-nocwd")
	noCwd.Cwd = nil
	mustClose(t, mustCreate(t, fx.s, noCwd))

	slug := WorkspaceSlug(session.Ptr("/work/proj"))
	if want := filepath.Join(fx.root, slug, "s-perm", "session.jsonl"); w.Path() != want {
		t.Errorf("path = %s, want %s", w.Path(), want)
	}
	if _, err := os.Stat(filepath.Join(fx.root, "no-workspace", "s-nocwd", "session.jsonl")); err != nil {
		t.Errorf("session without cwd: %v", err)
	}
	for _, p := range []string{fx.root, filepath.Join(fx.root, slug), filepath.Dir(w.Path())} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o700 {
			t.Errorf("%s mode = %v, want 0700", p, fi.Mode().Perm())
		}
	}
	for _, p := range []string{w.Path(), filepath.Join(filepath.Dir(w.Path()), lockName), filepath.Join(fx.root, journalName)} {
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s mode = %v, want 0600", p, fi.Mode().Perm())
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(w.Path()), ".*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

func TestWorkspaceSlug(t *testing.T) {
	hash := func(cwd string) string { s := WorkspaceSlug(&cwd); return s[strings.LastIndexByte(s, '-')+1:] }
	tests := []struct {
		cwd  *string
		want string
	}{
		{nil, "no-workspace"},
		{session.Ptr("/home/u/myproj"), "myproj-" + hash("/home/u/myproj")},
		{session.Ptr("/home/u/My Proj!"), "My-Proj-" + hash("/home/u/My Proj!")},
		{session.Ptr("/"), "workspace-" + hash("/")},
		{session.Ptr("/srv/.hidden"), "hidden-" + hash("/srv/.hidden")},
		{session.Ptr("/srv/проект"), "workspace-" + hash("/srv/проект")},
		{session.Ptr("/srv/" + strings.Repeat("a", 100)), strings.Repeat("a", 48) + "-" + hash("/srv/"+strings.Repeat("a", 100))},
	}
	for _, tt := range tests {
		got := WorkspaceSlug(tt.cwd)
		if got != tt.want {
			t.Errorf("WorkspaceSlug(%v) = %q, want %q", tt.cwd, got, tt.want)
		}
		if tt.cwd != nil && len(hash(*tt.cwd)) != 12 {
			t.Errorf("hash part of %q is not 12 hex digits", got)
		}
	}
	if WorkspaceSlug(session.Ptr("/a/proj")) == WorkspaceSlug(session.Ptr("/b/proj")) {
		t.Error("two workspaces with the same last element share a slug")
	}
}

func TestCreateRefusesExistingIDInAnyWorkspace(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-dup")))
	other := testHeader("s-dup")
	other.Cwd = session.Ptr("/elsewhere")
	for _, h := range []session.Header{testHeader("s-dup"), other} {
		if _, err := fx.s.Create(h, nil); !errors.Is(err, ErrExists) {
			t.Errorf("Create(cwd %s) err = %v, want ErrExists", h.CwdOrEmpty(), err)
		}
	}
}

func TestCreateValidatesHeaderAndSeed(t *testing.T) {
	fx := newFixture(t, Options{})
	mod := func(f func(*session.Header)) session.Header { h := testHeader("s-bad"); f(&h); return h }
	tests := map[string]session.Header{
		"version":        mod(func(h *session.Header) { h.Version = 1 }),
		"empty id":       mod(func(h *session.Header) { h.ID = "" }),
		"slash in id":    mod(func(h *session.Header) { h.ID = "a/b" }),
		"dot id":         mod(func(h *session.Header) { h.ID = ".." }),
		"relative cwd":   mod(func(h *session.Header) { h.Cwd = session.Ptr("proj") }),
		"negative time":  mod(func(h *session.Header) { h.CreatedAt = -1 }),
		"unsafe time":    mod(func(h *session.Header) { h.CreatedAt = 1 << 53 }),
		"origin":         mod(func(h *session.Header) { h.Origin = session.Ptr("user") }),
		"empty owner":    mod(func(h *session.Header) { h.Owner = session.Ptr("") }),
		"negative seed":  mod(func(h *session.Header) { h.SeedLength = session.Ptr(-1) }),
		"negative depth": mod(func(h *session.Header) { h.DelegationDepth = session.Ptr(-2) }),
	}
	for name, h := range tests {
		if _, err := fx.s.Create(h, nil); err == nil {
			t.Errorf("%s: Create accepted an invalid header", name)
		}
	}
	if _, err := fx.s.Create(testHeader("s-seed"), []session.Event{ev(1, "x", `{}`)}); err == nil {
		t.Error("Create accepted a seed that does not start at seq 0")
	}
	if _, err := os.Stat(fx.root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a refused Create left files behind: %v", err)
	}
}

// countingFile counts the bytes read through it (List reads logs on
// several goroutines).
type countingFile struct {
	*os.File
	n *atomic.Int64
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

func TestListReadsOnlyHeaderLines(t *testing.T) {
	var read atomic.Int64
	fx := newFixture(t, Options{openFile: func(name string, flag int, perm os.FileMode) (logFile, error) {
		f, err := os.OpenFile(name, flag, perm)
		if err != nil {
			return nil, err
		}
		return countingFile{f, &read}, nil
	}})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-a")))
	// A 12 MB body whose lines are not even valid events: List must not care.
	big := rawHeader("s-big") + strings.Repeat("not json at all ", 750_000) + "\n{broken\n"
	writeLog(t, fx.s, "s-big", big)
	writeLog(t, fx.s, "s-badheader", `{"type":"session","version":7,"id":"s-badheader","createdAt":1}`+"\n")
	writeLog(t, fx.s, "s-wrongid", rawHeader("s-other"))
	if err := os.MkdirAll(filepath.Join(fx.root, "no-workspace", "s-unfinished"), 0o700); err != nil {
		t.Fatal(err)
	}

	read.Store(0)
	entries, err := fx.s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Header.ID)
		if fi, _ := os.Stat(e.Path); fi.Size() != e.Size {
			t.Errorf("%s size = %d, want %d", e.Header.ID, e.Size, fi.Size())
		}
	}
	if got := strings.Join(ids, ","); got != "s-a,s-big" {
		t.Errorf("listed %s, want s-a,s-big", got)
	}
	if n := read.Load(); n > 64<<10 {
		t.Errorf("List read %d bytes; it must read header lines only", n)
	}
	for _, id := range []string{"s-badheader", "s-wrongid"} {
		if !strings.Contains(fx.logs.String(), id) {
			t.Errorf("no warning names the skipped log %s; logs:\n%s", id, fx.logs.String())
		}
		if _, err := fx.s.Stat(t.Context(), id); err == nil {
			t.Errorf("Stat(%s) succeeded on an invalid header", id)
		} else {
			asCorrupt(t, err)
		}
	}
}

func TestListSkipsDuplicateIDWithWarning(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-twice")))
	dir := filepath.Join(fx.root, "zz-copy-000000000000", "s-twice")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, logName), []byte(rawHeader("s-twice")), 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := fx.s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !strings.Contains(fx.logs.String(), "same session id") {
		t.Errorf("entries = %d, logs = %s", len(entries), fx.logs.String())
	}
}

// TestListOfManyLogsIsTheListingOfOneAtATime lists enough logs for List
// to read their headers on several goroutines, and checks that what it
// returns and warns about is what reading them one by one gives: directory
// order, each broken log skipped with one warning across listings, a
// second log of an id skipped, and a second listing that opens only the
// logs it could not cache.
func TestListOfManyLogsIsTheListingOfOneAtATime(t *testing.T) {
	var opens atomic.Int64
	fx := newFixture(t, Options{openFile: func(name string, flag int, perm os.FileMode) (logFile, error) {
		opens.Add(1)
		return os.OpenFile(name, flag, perm)
	}})
	type listedLog struct{ slug, id, path string }
	var want []listedLog
	broken := 0
	for i := range 6*listChunk + 7 {
		id, cwd := fmt.Sprintf("s-%04d", i), fmt.Sprintf("/work/proj-%d", i%3)
		slug := WorkspaceSlug(&cwd)
		if i%50 == 17 {
			writeLogIn(t, fx.s, slug, id, `{"type":"session","version":7,"id":"`+id+`","createdAt":1}`+"\n")
			broken++
			continue
		}
		header := fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%q,"delegationDepth":0}`, id, 1700000000000+i, cwd)
		want = append(want, listedLog{slug, id, writeLogIn(t, fx.s, slug, id, header+"\n")})
	}
	// A copy of a log under a workspace directory listed later.
	writeLogIn(t, fx.s, "zz-copy-000000000000", "s-0005", rawHeader("s-0005"))
	slices.SortFunc(want, func(a, b listedLog) int { return cmp.Or(cmp.Compare(a.slug, b.slug), cmp.Compare(a.id, b.id)) })

	check := func(entries []Entry) {
		t.Helper()
		if len(entries) != len(want) {
			t.Fatalf("listed %d logs, want %d", len(entries), len(want))
		}
		for i, e := range entries {
			if e.Path != want[i].path || e.Header.ID != want[i].id {
				t.Fatalf("entry %d is %s (%s), want %s (%s)", i, e.Header.ID, e.Path, want[i].id, want[i].path)
			}
		}
	}
	first, err := fx.s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	check(first)
	opens.Store(0)
	second, err := fx.s.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	check(second)
	if n := opens.Load(); n != int64(broken) {
		t.Errorf("second List opened %d logs, want the %d broken ones", n, broken)
	}
	logs := fx.logs.String()
	if n := strings.Count(logs, "skipping unreadable session log"); n != broken {
		t.Errorf("%d warnings of unreadable logs over two listings, want one for each of %d; logs:\n%s", n, broken, logs)
	}
	if !strings.Contains(logs, "same session id") {
		t.Errorf("no warning for the second log of s-0005; logs:\n%s", logs)
	}
}

func TestListOfMissingRootIsEmpty(t *testing.T) {
	fx := newFixture(t, Options{})
	entries, err := fx.s.List(t.Context())
	if err != nil || len(entries) != 0 {
		t.Fatalf("List = %v, %v", entries, err)
	}
}

func TestRevisionTracksBytesAndStore(t *testing.T) {
	fx := newFixture(t, Options{})
	w := mustCreate(t, fx.s, testHeader("s-rev"))
	first, err := fx.s.Stat(t.Context(), "s-rev")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := fx.s.Stat(t.Context(), "s-rev")
	if first.Revision != again.Revision {
		t.Errorf("revision changed without a write: %s then %s", first.Revision, again.Revision)
	}
	mustAppend(t, w, ev(0, session.TypeTurnStart, `{"turn":1}`))
	after, _ := fx.s.Stat(t.Context(), "s-rev")
	if after.Revision == first.Revision {
		t.Error("revision did not change after an append")
	}
	mustClose(t, w)

	other := newFixture(t, Options{})
	writeLog(t, other.s, "s-rev", string(readFile(t, w.Path())))
	twin, err := other.s.Stat(t.Context(), "s-rev")
	if err != nil {
		t.Fatal(err)
	}
	if twin.Revision == after.Revision || !strings.HasPrefix(twin.Revision, other.s.Root()+"#") {
		t.Errorf("revisions of two stores must differ and name their root: %s vs %s", twin.Revision, after.Revision)
	}
}

func TestMissingSessionIsErrNotFound(t *testing.T) {
	fx := newFixture(t, Options{})
	mustClose(t, mustCreate(t, fx.s, testHeader("s-here")))
	for _, id := range []string{"s-absent", "../s-here", ""} {
		if _, err := fx.s.Stat(t.Context(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Stat(%q) err = %v", id, err)
		}
		if _, _, err := fx.s.Inspect(t.Context(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Inspect(%q) err = %v", id, err)
		}
		if _, _, err := fx.s.Load(t.Context(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Load(%q) err = %v", id, err)
		}
	}
}

func TestLiveSessionPersistsThroughWriter(t *testing.T) {
	fx := newFixture(t, Options{})
	h := testHeader("s-live")
	w := mustCreate(t, fx.s, h)
	live := session.NewLive(h, nil, session.LiveOptions{Sink: w})
	if _, err := live.Append(session.TypeTurnStart, session.TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Append(session.TypeUserMessage, session.Message{Role: session.RoleUser,
		Content: []session.ContentBlock{session.TextBlock("hi <there>")}, Source: session.UserSource, ID: "m1"}); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	_, want := live.Snapshot()
	_, got, err := fx.s.Inspect(t.Context(), "s-live")
	if err != nil {
		t.Fatal(err)
	}
	sameEvents(t, got, want)
	if _, _, err := fx.s.Load(t.Context(), "s-live"); err != nil {
		t.Fatalf("the lock was not released by Live.Close: %v", err)
	}
}

// TestListRereadsOnlyLogsWhoseFileChanged pins the header cache: a second
// listing opens no unchanged log, still reports fresh sizes and revisions,
// and re-reads a log that was replaced by another file.
func TestListRereadsOnlyLogsWhoseFileChanged(t *testing.T) {
	var opens atomic.Int64
	fx := newFixture(t, Options{openFile: func(name string, flag int, perm os.FileMode) (logFile, error) {
		opens.Add(1)
		return os.OpenFile(name, flag, perm)
	}})
	w := mustCreate(t, fx.s, testHeader("s-grows"))
	mustClose(t, mustCreate(t, fx.s, testHeader("s-replaced")))
	first, err := fx.s.List(t.Context())
	if err != nil || len(first) != 2 {
		t.Fatalf("first List: %d entries, %v", len(first), err)
	}
	mustAppend(t, w, ev(0, "turn/start", `{"turn":1}`))
	mustClose(t, w)
	// Replaced the way every writer of a new log does it: a new file
	// renamed over the old one.
	var replacedPath string
	for _, e := range first {
		if e.Header.ID == "s-replaced" {
			replacedPath = e.Path
		}
	}
	tmp := replacedPath + ".new"
	if err := os.WriteFile(tmp, []byte(strings.Replace(rawHeader("s-replaced"), "1700000000000", "42", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, replacedPath); err != nil {
		t.Fatal(err)
	}

	opens.Store(0)
	second, err := fx.s.List(t.Context())
	if err != nil || len(second) != 2 {
		t.Fatalf("second List: %d entries, %v", len(second), err)
	}
	if n := opens.Load(); n != 1 {
		t.Errorf("second List opened %d logs, want only the replaced one", n)
	}
	for _, e := range second {
		fi, _ := os.Stat(e.Path)
		if fi.Size() != e.Size {
			t.Errorf("%s: size %d, want %d", e.Header.ID, e.Size, fi.Size())
		}
		switch e.Header.ID {
		case "s-grows":
			for _, f := range first {
				if f.Header.ID == "s-grows" && f.Revision == e.Revision {
					t.Error("the grown log kept its revision")
				}
			}
		case "s-replaced":
			if e.Header.CreatedAt != 42 {
				t.Errorf("the replaced log's header was served from the cache: %+v", e.Header)
			}
		}
	}
}
