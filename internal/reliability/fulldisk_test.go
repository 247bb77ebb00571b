package reliability

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

func init() { helpers["fsize"] = fsizeHelper }

// fsizeHelper caps the size of any file this process writes
// (RLIMIT_FSIZE, inherited across exec) and becomes the command in
// DSH_REL_ARGV: a disk that fills up, for one process, without root.
// Go ignores SIGXFSZ, so an oversized write fails with EFBIG.
func fsizeHelper() error {
	limit, err := strconv.ParseUint(os.Getenv("DSH_REL_FSIZE"), 10, 64)
	if err != nil {
		return err
	}
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("DSH_REL_ARGV")), &argv); err != nil {
		return err
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		return err
	}
	return syscall.Exec(argv[0], argv, os.Environ())
}

// limitedCmd runs argv with every file it writes capped at limit bytes.
func limitedCmd(t *testing.T, limit int64, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	raw, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(env, helperEnv+"=fsize", "DSH_REL_FSIZE="+strconv.FormatInt(limit, 10), "DSH_REL_ARGV="+string(raw))
	return cmd
}

// loadLog reads the one session log under home with the repairing load a
// later dsh would use, and returns its events.
func loadLog(t *testing.T, home string) (session.Header, []session.Event) {
	t.Helper()
	st := store.New(filepath.Join(home, "sessions"), store.Options{Log: slog.New(slog.DiscardHandler)})
	entries, err := st.List(context.Background())
	if err != nil || len(entries) != 1 {
		t.Fatalf("sessions on disk: %d, %v", len(entries), err)
	}
	h, events, err := st.Load(context.Background(), entries[0].Header.ID)
	if err != nil {
		t.Fatalf("the log does not load: %v", err)
	}
	if err := session.ValidateLog(h, events); err != nil {
		t.Fatalf("the loaded log is invalid: %v", err)
	}
	return h, events
}

// requestsAreDurable checks what dsh acknowledged before each model
// request: the flush barrier puts every event before a request on disk
// before the request is sent, so each request the fake server received
// has its request/header in the log, after the user's prompt.
func requestsAreDurable(t *testing.T, events []session.Event, prompt string, requests int) {
	t.Helper()
	headers, promptAt := 0, -1
	for _, e := range events {
		switch e.Type {
		case session.TypeRequestHeader:
			headers++
		case session.TypeUserMessage:
			if strings.Contains(string(e.Data), prompt) && promptAt < 0 {
				promptAt = e.Seq
			}
		}
	}
	if promptAt < 0 {
		t.Fatalf("the prompt %q is not in the log", prompt)
	}
	if requests == 0 {
		t.Fatal("the fake model received no request: the test did not reach the model")
	}
	if headers < min(requests, 1) {
		t.Fatalf("%d requests reached the model but the log holds %d request headers", requests, headers)
	}
}

// fileLimit is the file size cap of these tests. It applies to every file
// dsh writes, so it leaves room for the search index's empty schema (about
// 1.4 MiB: a page per table and index, 64 KiB pages), which dsh makes
// before it can serve a session.
const fileLimit = 2 << 20

// bigReply is a model answer larger than the file size cap: its second
// streamed half is the write that fails.
func bigReply(limit int64) fakellm.Reply {
	return fakellm.Reply{Text: strings.Repeat("lorem ipsum dolor sit amet ", int(limit/27)*2)}
}

func TestFullDiskDuringDshRunReachesTheUserAndKeepsTheLog(t *testing.T) {
	bin := dshBinary(t)
	const limit = fileLimit
	srv := fakellm.New(bigReply(limit))
	defer srv.Close()
	h := newHermetic(t)
	cmd := limitedCmd(t, limit, []string{"HOME=" + h.root, "PATH=" + os.Getenv("PATH")},
		bin, "run", "--home", h.home, "--set", "llm.base_url="+srv.URL, "--set", "llm.api_key=k", "write me an essay")
	cmd.Dir = h.cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("dsh run exited with %v; stdout %q; stderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"file too large", "SESSION_WRITE_FAILED", "check free disk space"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr.String())
		}
	}
	_, events := loadLog(t, h.home)
	requestsAreDurable(t, events, "write me an essay", len(srv.Requests()))
}

// acpClient drives a dsh acp process line by line.
type acpClient struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *lockedBuffer
	nextID int
}

// lockedBuffer is a child's stderr, read while the child may still write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startACP starts the built dsh acp with its files capped at limit bytes,
// talking to the fake model at url, and initializes it.
func startACP(t *testing.T, h hermetic, limit int64, url string) *acpClient {
	t.Helper()
	cmd := limitedCmd(t, limit, []string{"HOME=" + h.root, "PATH=" + os.Getenv("PATH")},
		dshBinary(t), "acp", "--home", h.home, "--set", "llm.base_url="+url, "--set", "llm.api_key=k")
	cmd.Dir = h.cwd
	c := &acpClient{t: t, cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	var err error
	if c.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.out = bufio.NewReaderSize(out, 1<<20)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if _, e := c.call("initialize", map[string]any{"protocolVersion": 1}); e != nil {
		t.Fatalf("initialize: %+v", e)
	}
	return c
}

// close ends stdin and waits for a clean exit.
func (c *acpClient) close() {
	c.t.Helper()
	if err := c.in.Close(); err != nil {
		c.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatalf("dsh acp exited with %v; stderr:\n%s", err, c.stderr.String())
		}
	case <-time.After(time.Minute):
		c.t.Fatal("dsh acp did not exit after stdin closed")
	}
}

func (c *acpClient) prompt(id, text string) (json.RawMessage, *rpcError) {
	return c.call("session/prompt", map[string]any{"sessionId": id, "prompt": []any{map[string]any{"type": "text", "text": text}}})
}

func (c *acpClient) call(method string, params any) (json.RawMessage, *rpcError) {
	c.t.Helper()
	c.nextID++
	id := c.nextID
	raw, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(raw, '\n')); err != nil {
		c.t.Fatalf("write %s: %v; stderr:\n%s", method, err, c.stderr.String())
	}
	for {
		line, err := c.out.ReadString('\n')
		if err != nil {
			c.t.Fatalf("waiting for the answer to %s: %v; stderr:\n%s", method, err, c.stderr.String())
		}
		var f struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *rpcError       `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			c.t.Fatalf("stdout carried a line that is not a frame: %q", line)
		}
		if f.ID != nil && *f.ID == id && f.Method == "" {
			return f.Result, f.Error
		}
	}
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func TestFullDiskDuringAnACPPromptIsAJSONRPCErrorAndTheAgentLivesOn(t *testing.T) {
	const limit = fileLimit
	srv := fakellm.New(bigReply(limit), fakellm.Reply{Text: "short answer"})
	defer srv.Close()
	h := newHermetic(t)
	c := startACP(t, h, limit, srv.URL)
	res, e := c.call("session/new", map[string]any{"cwd": h.cwd, "mcpServers": []any{}})
	if e != nil {
		t.Fatalf("session/new: %+v", e)
	}
	var created struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &created); err != nil {
		t.Fatal(err)
	}
	res, e = c.prompt(created.SessionID, "write me an essay")
	if e == nil {
		t.Fatalf("a prompt whose answer could not be saved answered %s", res)
	}
	for _, want := range []string{"file too large", "check free disk space"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the JSON-RPC error does not say %q: %+v", want, e)
		}
	}
	if !strings.Contains(string(e.Data), "SESSION_WRITE_FAILED") {
		t.Errorf("the JSON-RPC error carries no SESSION_WRITE_FAILED code: %s", e.Data)
	}
	// The agent lives on: space is not freed, but a small exchange fits.
	if res, e := c.prompt(created.SessionID, "and a short one"); e != nil || !strings.Contains(string(res), "end_turn") {
		t.Errorf("the next prompt: %s %+v", res, e)
	}
	requests := len(srv.Requests())
	c.close()
	_, events := loadLog(t, h.home)
	requestsAreDurable(t, events, "write me an essay", requests)
	requestsAreDurable(t, events, "and a short one", requests)
}

// fillLog writes a session in cwd whose log is exactly size bytes (one
// long user message fills it) and that a resume appends nothing to.
func fillLog(t *testing.T, home, cwd string, size int64) string {
	t.Helper()
	root := filepath.Join(home, "sessions")
	st := store.New(root, store.Options{Log: slog.New(slog.DiscardHandler)})
	id := "00000000-0000-4000-8000-0000000000f1"
	h := session.Header{Version: session.FormatVersion, ID: id, CreatedAt: time.Now().UnixMilli(), Cwd: &cwd, DelegationDepth: session.Ptr(0)}
	write := func(n int) int64 {
		events := []session.Event{
			{Type: session.TypeTurnStart, Seq: 0, Time: h.CreatedAt, Data: session.MustMarshal(session.TurnStart{Turn: 1})},
			{Type: session.TypeUserMessage, Seq: 1, Time: h.CreatedAt, Data: session.MustMarshal(userMessage(strings.Repeat("x", n), "u1")), SurfaceOp: session.OpAppend},
			{Type: session.TypeTurnEnd, Seq: 2, Time: h.CreatedAt, Data: session.MustMarshal(session.TurnEnd{Turn: 1, Reason: session.TurnEndReason{Kind: session.EndCompleted}})},
			// Resuming writes this marker unless it is already last.
			{Type: session.TypeEndSeed, Seq: 3, Time: h.CreatedAt, Data: json.RawMessage(`{}`)},
		}
		w, err := st.Create(h, events)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		e, err := st.Stat(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return e.Size
	}
	got := write(1000)
	if err := os.RemoveAll(filepath.Join(root, store.WorkspaceSlug(&cwd))); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "changes.log")); err != nil {
		t.Fatal(err)
	}
	st = store.New(root, store.Options{Log: slog.New(slog.DiscardHandler)})
	if got = write(1000 + int(size-got)); got != size {
		t.Fatalf("the log is %d bytes, want %d", got, size)
	}
	return id
}

// TestFullLogDuringAnACPPromptIsAJSONRPCError resumes a session whose log
// already reached the size cap: not even the turn's start can be saved.
// The prompt must still fail visibly, not answer as if it were cancelled.
func TestFullLogDuringAnACPPromptIsAJSONRPCError(t *testing.T) {
	const limit = fileLimit
	srv := fakellm.New(fakellm.Reply{Text: "never saved"})
	defer srv.Close()
	h := newHermetic(t)
	id := fillLog(t, h.home, h.cwd, limit-16)
	c := startACP(t, h, limit, srv.URL)
	if _, e := c.call("session/load", map[string]any{"sessionId": id, "cwd": h.cwd, "mcpServers": []any{}}); e != nil {
		t.Fatalf("session/load: %+v", e)
	}
	res, e := c.prompt(id, "hello")
	if e == nil {
		t.Fatalf("a prompt that could not be saved at all answered %s", res)
	}
	for _, want := range []string{"file too large", "check free disk space"} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("the JSON-RPC error does not say %q: %+v", want, e)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d model requests were sent for a prompt that was never saved", n)
	}
	c.close()
	if _, events := loadLog(t, h.home); len(events) != 4 {
		t.Errorf("the full log changed: %d events", len(events))
	}
}
