package store

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Child processes re-execute this test binary; helperEnv selects what the
// child does instead of running tests.
const helperEnv = "DSH_STORE_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

func runHelper(mode string) int {
	var err error
	switch mode {
	case "lock":
		err = helperHoldLock(os.Getenv("DSH_STORE_ROOT"), os.Getenv("DSH_STORE_ID"))
	case "crash":
		err = helperCrashWriter(os.Getenv("DSH_STORE_ROOT"), os.Getenv("DSH_STORE_ID"), os.Getenv("DSH_STORE_SEED"))
	default:
		err = fmt.Errorf("unknown helper mode %q", mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 1
	}
	return 0
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type fixture struct {
	s    *Store
	root string
	logs *syncBuffer
}

func newFixture(t *testing.T, opts Options) fixture {
	t.Helper()
	root := filepath.Join(t.TempDir(), "sessions")
	logs := &syncBuffer{}
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(logs, nil))
	}
	return fixture{s: New(root, opts), root: root, logs: logs}
}

func testHeader(id string) session.Header {
	return session.Header{Version: 0, ID: id, CreatedAt: 1700000000000, Cwd: session.Ptr("/work/proj")}
}

// ev builds an event from literal JSON data.
func ev(seq int, typ, data string) session.Event {
	e := session.Event{Type: typ, Seq: seq, Time: 1700000000000 + int64(seq), Data: []byte(data)}
	if session.IsSurfaceType(typ) {
		e.SurfaceOp = session.OpAppend
	}
	return e
}

// toolCall and toolResult build the payloads the agent loop writes.
func toolCall(seq, turn, step int, id string) session.Event {
	return ev(seq, session.TypeToolCall, fmt.Sprintf(
		`{"turn":%d,"step":%d,"callId":%q,"name":"read","arguments":"{}"}`, turn, step, id))
}

func toolResult(seq, turn, step int, id, text string) session.Event {
	e := ev(seq, session.TypeToolResult, fmt.Sprintf(
		`{"turn":%d,"step":%d,"message":{"content":[{"type":"tool-result","toolCallId":%q,"content":[{"type":"text","text":%q}],"isError":false}],"source":{"kind":"tool","callId":%q},"role":"user","id":"m-%s"}}`,
		turn, step, id, text, id, id))
	return e
}

func mustCreate(t *testing.T, s *Store, h session.Header, seed ...session.Event) *Writer {
	t.Helper()
	w, err := s.Create(h, seed)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return w
}

func mustAppend(t *testing.T, w *Writer, events ...session.Event) {
	t.Helper()
	if err := w.Append(events...); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

func mustClose(t *testing.T, w *Writer) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func appendRaw(t *testing.T, path, raw string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(raw); err != nil {
		t.Fatal(err)
	}
}

// writeLog creates a log whose content is given verbatim (header line
// included), as another writer or a damaged disk would leave it.
func writeLog(t *testing.T, s *Store, id, content string) string {
	t.Helper()
	return writeLogIn(t, s, WorkspaceSlug(session.Ptr("/work/proj")), id, content)
}

// writeLogIn is writeLog under the workspace directory slug.
func writeLogIn(t *testing.T, s *Store, slug, id, content string) string {
	t.Helper()
	dir := filepath.Join(s.Root(), slug, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, logName)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func rawHeader(id string) string {
	return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":1700000000000,"cwd":"/work/proj","delegationDepth":0}`, id) + "\n"
}

func lines(events ...session.Event) string {
	var b strings.Builder
	for _, e := range events {
		l, err := e.MarshalLine()
		if err != nil {
			panic(err)
		}
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func sameEvents(t *testing.T, got, want []session.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		g, _ := got[i].MarshalLine()
		w, _ := want[i].MarshalLine()
		if !bytes.Equal(g, w) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

func asCorrupt(t *testing.T, err error) *CorruptError {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want a CorruptError", err)
	}
	return ce
}
