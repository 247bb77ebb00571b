package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
)

// editor is a client with a file system served from an in-memory buffer
// map and fake terminals, on top of the recording client.
type editor struct {
	*client

	mu      sync.Mutex
	buffers map[string]string // path -> unsaved text
	failing map[string]bool   // paths whose reads the editor refuses
	fsLog   []string          // "read <path>", "write <path>"
	terms   map[string]*fakeTerminal
	termLog []string // "create", "wait", "output", "kill", "release", in arrival order
	// created receives each terminal as it is created.
	created chan *fakeTerminal
	// behave decides how a new terminal's command runs.
	behave func(*fakeTerminal)
}

// fakeTerminal is one command "running" in the editor.
type fakeTerminal struct {
	id  string
	req sdk.CreateTerminalRequest

	mu     sync.Mutex
	output string
	polls  int
	exit   chan sdk.WaitForTerminalExitResponse // buffered; the command's end
	// onPoll runs after each terminal/output.
	onPoll func(*fakeTerminal)
}

func (ft *fakeTerminal) end(code int) {
	select {
	case ft.exit <- sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(code)}:
	default:
	}
}

func newEditor() *editor {
	return &editor{client: newClient(), buffers: map[string]string{}, failing: map[string]bool{},
		terms: map[string]*fakeTerminal{}, created: make(chan *fakeTerminal, 8)}
}

func (e *editor) log(kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.termLog = append(e.termLog, kind)
}

func (e *editor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fsLog = append(e.fsLog, "read "+p.Path)
	if e.failing[p.Path] {
		return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": "cannot decode the file"})
	}
	text, ok := e.buffers[p.Path]
	if !ok {
		b, err := os.ReadFile(p.Path)
		if err != nil {
			return sdk.ReadTextFileResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		text = string(b)
	}
	return sdk.ReadTextFileResponse{Content: text}, nil
}

func (e *editor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fsLog = append(e.fsLog, "write "+p.Path)
	e.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

func (e *editor) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	e.log("create")
	e.mu.Lock()
	ft := &fakeTerminal{id: "term-" + string(rune('a'+len(e.terms))), req: p, exit: make(chan sdk.WaitForTerminalExitResponse, 1)}
	e.terms[ft.id] = ft
	behave := e.behave
	e.mu.Unlock()
	if behave != nil {
		behave(ft)
	}
	e.created <- ft
	return sdk.CreateTerminalResponse{TerminalId: ft.id}, nil
}

func (e *editor) term(id string) *fakeTerminal {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.terms[id]
}

func (e *editor) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	e.log("output")
	ft := e.term(p.TerminalId)
	if ft == nil {
		return sdk.TerminalOutputResponse{}, sdk.NewInvalidParams("no such terminal")
	}
	ft.mu.Lock()
	ft.polls++
	resp := sdk.TerminalOutputResponse{Output: ft.output}
	onPoll := ft.onPoll
	ft.mu.Unlock()
	if onPoll != nil {
		onPoll(ft)
	}
	return resp, nil
}

func (e *editor) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	e.log("wait")
	ft := e.term(p.TerminalId)
	if ft == nil {
		return sdk.WaitForTerminalExitResponse{}, sdk.NewInvalidParams("no such terminal")
	}
	select {
	case r := <-ft.exit:
		ft.exit <- r // later waits see it too
		return r, nil
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

func (e *editor) KillTerminal(_ context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	e.log("kill")
	if ft := e.term(p.TerminalId); ft != nil {
		select {
		case ft.exit <- sdk.WaitForTerminalExitResponse{Signal: sdk.Ptr("SIGKILL")}:
		default:
		}
	}
	return sdk.KillTerminalResponse{}, nil
}

func (e *editor) ReleaseTerminal(_ context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	e.log("release")
	return sdk.ReleaseTerminalResponse{}, nil
}

func (e *editor) logs() (fs, term []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.fsLog), slices.Clone(e.termLog)
}

// startEditor serves the world to ed over pipes with the real coding tools
// registered, and initializes with caps.
func startEditor(t *testing.T, w *world, ed *editor, caps sdk.ClientCapabilities) *harness {
	t.Helper()
	cfg := codingtools.DefaultConfig()
	cfg.Bash.OutputDir = filepath.Join(t.TempDir(), "bash-output")
	set, err := codingtools.New(cfg, codingtools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = set.Close() })
	for _, d := range set.Definitions() {
		remove, err := w.tools.Register(d)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(remove)
	}
	h := startAs(t, w, ed, ed.client)
	if _, err := h.conn.Initialize(h.ctx, sdk.InitializeRequest{ProtocolVersion: 1, ClientCapabilities: caps}); err != nil {
		t.Fatal(err)
	}
	return h
}

func args(t *testing.T, v map[string]any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var editorFS = sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}

// The model reads the editor's unsaved buffer, and its edits and new files
// land in the buffers, not on disk.
func TestFilesOfTheWorkspaceComeFromTheEditorsBuffers(t *testing.T) {
	w := newWorld(t)
	ed := newEditor()
	h := startEditor(t, w, ed, editorFS)
	cwd := workspace(t)
	main := filepath.Join(cwd, "main.go")
	if err := os.WriteFile(main, []byte("package main // on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed.buffers[main] = "package main // unsaved\n\nfunc main() {}\n"
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)

	w.provider.add(toolCalls("read", args(t, map[string]any{"file_path": "main.go"})), reply("", "read"))
	if _, err := h.prompt(id, "read it"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr || !strings.Contains(text, "1: package main // unsaved\n2: \n3: func main() {}") {
		t.Fatalf("read result = %q (error %v), want the buffer's text", text, isErr)
	}

	w.provider.add(toolCalls("edit", args(t, map[string]any{"file_path": "main.go", "old_string": "func main() {}", "new_string": "func main() { run() }"})), reply("", "edited"))
	if _, err := h.prompt(id, "edit it"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr {
		t.Fatalf("edit failed: %s", text)
	}
	w.provider.add(toolCalls("write", args(t, map[string]any{"file_path": "pkg/new.go", "content": "package pkg\n"})), reply("", "written"))
	if _, err := h.prompt(id, "write one"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr {
		t.Fatalf("write failed: %s", text)
	}

	ed.mu.Lock()
	got, created := ed.buffers[main], ed.buffers[filepath.Join(cwd, "pkg", "new.go")]
	ed.mu.Unlock()
	if got != "package main // unsaved\n\nfunc main() { run() }\n" {
		t.Errorf("buffer after edit = %q", got)
	}
	if created != "package pkg\n" {
		t.Errorf("new file's buffer = %q", created)
	}
	if b, _ := os.ReadFile(main); string(b) != "package main // on disk\n" {
		t.Errorf("disk after edit = %q, want it untouched", b)
	}
	if _, err := os.Stat(filepath.Join(cwd, "pkg", "new.go")); !os.IsNotExist(err) {
		t.Errorf("the new file reached the disk: %v", err)
	}
	// The cards show what the calls change, not a diff against the disk.
	wire := h.wire.String()
	if strings.Contains(wire, "on disk") {
		t.Error("a card shows the disk's text of a file the editor serves")
	}
	if !strings.Contains(wire, `"newText":"func main() { run() }","oldText":"func main() {}"`) {
		t.Error("the edit's card lacks the replaced text")
	}
	fsLog, _ := ed.logs()
	want := []string{"read " + main, "read " + main, "write " + main, "write " + filepath.Join(cwd, "pkg", "new.go")}
	if !slices.Equal(fsLog, want) {
		t.Errorf("fs requests = %q, want %q", fsLog, want)
	}
}

// A file the editor cannot read is read on disk; a file outside the
// workspace never goes to the editor; the user typing in a buffer after
// the model read it stops an edit.
func TestEditorFilesFallBackAndNoticeChanges(t *testing.T) {
	w := newWorld(t)
	ed := newEditor()
	h := startEditor(t, w, ed, editorFS)
	cwd := workspace(t)
	refused := filepath.Join(cwd, "data.csv")
	if err := os.WriteFile(refused, []byte("a,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ed.failing[refused] = true
	outside := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(outside, []byte("outside\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)

	w.provider.add(toolCalls("read", args(t, map[string]any{"file_path": "data.csv"})), reply("", "ok"))
	if _, err := h.prompt(id, "read"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr || !strings.Contains(text, "1: a,b") {
		t.Errorf("refused read = %q (error %v), want the disk's text", text, isErr)
	}
	w.provider.add(toolCalls("read", args(t, map[string]any{"file_path": outside})), reply("", "ok"))
	if _, err := h.prompt(id, "read outside"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr || !strings.Contains(text, "1: outside") {
		t.Errorf("outside read = %q (error %v)", text, isErr)
	}
	fsLog, _ := ed.logs()
	if slices.Contains(fsLog, "read "+outside) {
		t.Errorf("a file outside the workspace went to the editor: %q", fsLog)
	}

	a := filepath.Join(cwd, "a.txt")
	w.provider.add(toolCalls("read", args(t, map[string]any{"file_path": "a.txt"})), reply("", "ok"))
	if _, err := h.prompt(id, "read a"); err != nil {
		t.Fatal(err)
	}
	ed.mu.Lock()
	ed.buffers[a] = "a typed by the user\n"
	ed.mu.Unlock()
	w.provider.add(toolCalls("edit", args(t, map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "b"})), reply("", "ok"))
	if _, err := h.prompt(id, "edit a"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); !isErr || !strings.Contains(text, "a.txt changed in the editor since this session last read it") {
		t.Errorf("edit of a changed buffer = %q (error %v)", text, isErr)
	}
}

// editorTerminal also asks for Zed's display-only terminal, which a client
// with real terminals never gets.
var editorTerminal = sdk.ClientCapabilities{Terminal: true, Meta: map[string]any{"terminal_output": true}}

// bash runs in the editor's terminal: create, the card embeds the
// terminal, output is polled while it runs, wait for the exit, release.
func TestCommandsRunInTheEditorsTerminal(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-never-shown")
	w := newWorld(t)
	ed := newEditor()
	ed.behave = func(ft *fakeTerminal) {
		ft.output = "line 1\n"
		// The command ends once dsh has seen its first output.
		ft.onPoll = func(ft *fakeTerminal) {
			ft.mu.Lock()
			ft.output = "line 1\nline 2\n"
			ft.mu.Unlock()
			ft.end(3)
		}
	}
	h := startEditor(t, w, ed, editorTerminal)
	cwd := workspace(t)
	id := h.newSession(cwd)
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("bash", args(t, map[string]any{"command": "make test", "description": "run the tests"})), reply("", "done"))
	if _, err := h.prompt(id, "test"); err != nil {
		t.Fatal(err)
	}
	text, isErr := lastResult(t, w, id)
	if isErr || text != "line 1\nline 2\n[exit code: 3]" {
		t.Errorf("result = %q (error %v)", text, isErr)
	}
	var ft *fakeTerminal
	select {
	case ft = <-ed.created:
	default:
		t.Fatal("no terminal/create")
	}
	if ft.req.Command != "bash" || !slices.Equal(ft.req.Args, []string{"-c", "make test"}) || ft.req.Cwd == nil || *ft.req.Cwd != cwd {
		t.Errorf("terminal/create = %+v", ft.req)
	}
	var blanked bool
	for _, v := range ft.req.Env {
		if v.Value == "sk-never-shown" {
			t.Errorf("the credential reached the editor's terminal: %+v", v)
		}
		if v.Name == "DEEPSEEK_API_KEY" && v.Value == "" {
			blanked = true
		}
	}
	if !blanked {
		t.Error("the credential variable is not blanked in the terminal's environment")
	}
	_, termLog := ed.logs()
	if len(termLog) < 4 || termLog[0] != "create" || termLog[len(termLog)-1] != "release" ||
		!slices.Contains(termLog, "wait") || !slices.Contains(termLog, "output") || slices.Contains(termLog, "kill") {
		t.Errorf("terminal requests = %q, want create, wait and output, release, no kill", termLog)
	}
	wire := h.wire.String()
	ref := `"content":[{"terminalId":"` + ft.id + `","type":"terminal"}`
	if strings.Count(wire, ref) < 2 {
		t.Errorf("the card does not embed terminal %s while running and at the end", ft.id)
	}
	if !strings.Contains(wire, ref+`,{"content":{"text":"[exit code: 3]","type":"text"},"type":"content"}]`) {
		t.Error("the final card does not say how the command ended")
	}
	if strings.Contains(wire, "```console") || strings.Contains(wire, "terminal_info") || strings.Contains(wire, "terminal_output") {
		t.Error("the card got the output as text or through _meta besides the terminal")
	}
	statuses := statusesOf(h.c.take(), "call_1")
	if !slices.Equal(statuses, []string{"pending", "in_progress", "completed"}) {
		t.Errorf("statuses = %q", statuses)
	}
}

// Cancelling the prompt kills the editor's terminal, then releases it.
func TestCancelKillsTheEditorsTerminal(t *testing.T) {
	w := newWorld(t)
	ed := newEditor()
	h := startEditor(t, w, ed, editorTerminal)
	id := h.newSession(workspace(t))
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("bash", args(t, map[string]any{"command": "sleep 1000", "description": "wait"})), reply("", "never"))
	answered := make(chan sdk.StopReason, 1)
	go func() {
		resp, err := h.prompt(id, "wait")
		if err != nil {
			t.Error(err)
		}
		answered <- resp.StopReason
	}()
	select {
	case <-ed.created:
	case <-time.After(30 * time.Second):
		t.Fatal("no terminal/create")
	}
	if err := h.conn.Cancel(h.ctx, sdk.CancelNotification{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-answered:
		if r != sdk.StopReasonCancelled {
			t.Errorf("stop reason = %s", r)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the prompt did not answer after cancel")
	}
	_, termLog := ed.logs()
	kill, release := slices.Index(termLog, "kill"), slices.Index(termLog, "release")
	if kill < 0 || release < kill {
		t.Errorf("terminal requests = %q, want kill then release", termLog)
	}
}

// The timeout kills the editor's terminal; the result says it timed out.
func TestTimeoutKillsTheEditorsTerminal(t *testing.T) {
	w := newWorld(t)
	ed := newEditor()
	ed.behave = func(ft *fakeTerminal) { ft.output = "started\n" }
	h := startEditor(t, w, ed, editorTerminal)
	id := h.newSession(workspace(t))
	h.c.answer = selected(optionAllowOnce)
	w.provider.add(toolCalls("bash", args(t, map[string]any{"command": "sleep 1000", "description": "wait", "timeout_ms": 50})), reply("", "ok"))
	if _, err := h.prompt(id, "wait"); err != nil {
		t.Fatal(err)
	}
	text, _ := lastResult(t, w, id)
	if text != "started\n[timed out after 50ms]" {
		t.Errorf("result = %q", text)
	}
	if !strings.Contains(h.wire.String(), `{"content":{"text":"[timed out after 50ms]","type":"text"},"type":"content"}`) {
		t.Error("the card does not say the command timed out")
	}
	_, termLog := ed.logs()
	kill, release := slices.Index(termLog, "kill"), slices.Index(termLog, "release")
	if kill < 0 || release < kill {
		t.Errorf("terminal requests = %q, want kill then release", termLog)
	}
}

func TestOutputFollowerFindsNewBytesInTrimmedSnapshots(t *testing.T) {
	var b strings.Builder
	f := &outputFollower{out: &b}
	f.update("", false)
	f.update("abc\n", false)
	f.update("abc\ndef\n", false)
	long := strings.Repeat("x", 300) + "END\n"
	f.update("abc\ndef\n"+long, false)
	// The client trimmed the start: the end of what was seen locates it.
	f.update(long[10:]+"more\n", true)
	if got, want := b.String(), "abc\ndef\n"+long+"more\n"; got != want {
		t.Errorf("followed %q, want %q", got, want)
	}
	if f.gap {
		t.Error("a gap was reported")
	}
	// A client sending more than the limit is held to it.
	f.update(strings.Repeat("y", maxTerminalOutput+10), false)
	if len(f.seen) != maxTerminalOutput {
		t.Errorf("kept %d bytes of an oversized snapshot, want %d", len(f.seen), maxTerminalOutput)
	}
	f.update("unrelated tail\n", true)
	if !f.gap || !strings.HasSuffix(b.String(), "[output the editor's terminal dropped] …\nunrelated tail\n") {
		t.Errorf("a lost stretch is not marked: %q", b.String())
	}
}

// A buffer too large for a frame fails the read at once, which then reads
// the disk, instead of waiting for an answer that was dropped.
func TestAnOversizedBufferIsReadOnDisk(t *testing.T) {
	w := newWorld(t)
	ed := newEditor()
	h := startEditor(t, w, ed, editorFS)
	cwd := workspace(t)
	a := filepath.Join(cwd, "a.txt")
	ed.buffers[a] = strings.Repeat("x", MaxFrameBytes+1)
	id := h.newSession(cwd)
	w.provider.add(toolCalls("read", args(t, map[string]any{"file_path": "a.txt"})), reply("", "ok"))
	if _, err := h.prompt(id, "read"); err != nil {
		t.Fatal(err)
	}
	if text, isErr := lastResult(t, w, id); isErr || !strings.HasPrefix(text, "1: a\n") {
		t.Errorf("result = %.80q (error %v), want the disk's text", text, isErr)
	}
}

// A client slow to answer terminal/output gets no second poll while one is
// unanswered (the polls do not pile up), and an unanswered poll holds up
// the command's end by at most terminalKillGrace. Fake time: no sleeps
// wait for anything real.
func TestASlowClientGetsOnePollAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := newWorld(t)
		ed := newEditor()
		release := make(chan struct{})
		ed.behave = func(ft *fakeTerminal) {
			ft.output = "first\n"
			ft.onPoll = func(ft *fakeTerminal) {
				ft.mu.Lock()
				first := ft.polls == 1
				ft.mu.Unlock()
				if first {
					<-release
				}
			}
		}
		h := startEditor(t, w, ed, editorTerminal)
		id := h.newSession(workspace(t))
		h.c.answer = selected(optionAllowOnce)
		w.provider.add(toolCalls("bash", args(t, map[string]any{"command": "make", "description": "build"})), reply("", "built"))
		answered := make(chan error, 1)
		go func() {
			_, err := h.prompt(id, "build")
			answered <- err
		}()
		ft := <-ed.created
		polls := func() int {
			ft.mu.Lock()
			defer ft.mu.Unlock()
			return ft.polls
		}
		time.Sleep(liveInterval * 3 / 2)
		synctest.Wait()
		if n := polls(); n != 1 {
			t.Fatalf("%d polls after one interval, want 1", n)
		}
		time.Sleep(20 * liveInterval)
		synctest.Wait()
		if n := polls(); n != 1 {
			t.Errorf("%d polls while the first was unanswered for 20 intervals, want 1", n)
		}
		ft.end(0)
		start := time.Now()
		if err := <-answered; err != nil {
			t.Fatal(err)
		}
		if held := time.Since(start); held > terminalKillGrace+liveInterval {
			t.Errorf("the unanswered poll held the command's end for %s, want at most %s", held, terminalKillGrace)
		}
		if text, isErr := lastResult(t, w, id); isErr || text != "first\n[exit code: 0]" {
			t.Errorf("result = %q (error %v)", text, isErr)
		}
		close(release)
	})
}
