package snapshots

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// agentProcess is the built dsh acp driven with raw lines.
type agentProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	frames chan map[string]any
	raw    chan string
	stderr *bytes.Buffer
}

func startAgent(t *testing.T, e *env, fixture string) *agentProcess {
	t.Helper()
	cmd := exec.Command(dshBin, "acp", "--profile", "snapshot", "--home", e.home,
		"--set", "llm.replay.fixture="+fixture, "--set", "plugins.spill.root="+e.spill)
	cmd.Dir = e.cwd
	cmd.Env = []string{"HOME=" + e.home, "PATH=" + os.Getenv("PATH")}
	p := &agentProcess{t: t, cmd: cmd, frames: make(chan map[string]any, 16), raw: make(chan string, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(p.frames)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
		for sc.Scan() {
			var f map[string]any
			if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
				p.raw <- sc.Text() // stdout must carry frames only
				continue
			}
			p.frames <- f
		}
	}()
	return p
}

func (p *agentProcess) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatalf("write to dsh acp: %v; stderr:\n%s", err, p.stderr.String())
	}
}

// next returns the next frame, failing on anything that is not one.
func (p *agentProcess) next() map[string]any {
	p.t.Helper()
	select {
	case f, ok := <-p.frames:
		if !ok {
			p.t.Fatalf("dsh acp closed stdout; stderr:\n%s", p.stderr.String())
		}
		return f
	case l := <-p.raw:
		p.t.Fatalf("stdout carried a line that is not a JSON frame: %q", truncate([]byte(l)))
	case <-time.After(time.Minute):
		p.t.Fatalf("no answer from dsh acp; stderr:\n%s", p.stderr.String())
	}
	return nil
}

// call sends a request and returns its answer; notifications before it
// (a new session's commands) are skipped.
func (p *agentProcess) call(id int, method, params string) map[string]any {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	f := p.next()
	for f["id"] == nil && f["method"] == "session/update" {
		f = p.next()
	}
	if f["id"] != float64(id) {
		p.t.Fatalf("answer to %d has id %v: %v", id, f["id"], f)
	}
	return f
}

func rpcError(f map[string]any) (float64, string) {
	e, ok := f["error"].(map[string]any)
	if !ok {
		return 0, ""
	}
	return e["code"].(float64), e["message"].(string)
}

// TestBadInputGetsErrorsAndTheAgentLivesOn sends the built binary what
// editors and attackers might: every bad frame gets a JSON-RPC error, the
// following request succeeds, and closing stdin exits 0.
func TestBadInputGetsErrorsAndTheAgentLivesOn(t *testing.T) {
	e := &env{home: t.TempDir(), cwd: t.TempDir(), other: t.TempDir(), spill: fixedDir(t)}
	fixture, _ := filepath.Abs(filepath.Join("testdata", "scenarios", "text-turn", "session.jsonl"))
	p := startAgent(t, e, fixture)

	if f := p.call(1, "initialize", `{"protocolVersion":1}`); f["result"] == nil {
		t.Fatalf("initialize: %v", f)
	}
	newIn := func(cwd string) string { return fmt.Sprintf(`{"cwd":%q,"mcpServers":[]}`, cwd) }
	foreign := p.call(2, "session/new", newIn(e.other))["result"].(map[string]any)["sessionId"].(string)
	p.call(3, "session/close", fmt.Sprintf(`{"sessionId":%q}`, foreign))

	huge := func(n int) string {
		return `{"jsonrpc":"2.0","id":50,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"` + strings.Repeat("x", n) + `"}]}}`
	}
	loadIn := func(id string) string { return fmt.Sprintf(`{"sessionId":%q,"cwd":%q,"mcpServers":[]}`, id, e.cwd) }
	cases := []struct {
		name   string
		line   string
		id     any
		code   float64
		prefix string
	}{
		{"not json", `{"jsonrpc":"2.0","id":`, nil, -32700, "Parse error"},
		{"binary noise", "\x00\x01\x02\xff", nil, -32700, "Parse error"},
		{"9 MiB line", huge(9 << 20), 50.0, -32002, "Resource not found: unknown session: nope"},
		{"11 MiB line", huge(11 << 20), 50.0, -32600, "Invalid request: the frame is"},
		{"unknown method", `{"jsonrpc":"2.0","id":51,"method":"session/explode","params":{}}`, 51.0, -32601, "Method not found"},
		{"wrong param types", `{"jsonrpc":"2.0","id":52,"method":"session/prompt","params":{"sessionId":1,"prompt":"hi"}}`, 52.0, -32602, "Invalid params"},
		{"prompt for unknown session", `{"jsonrpc":"2.0","id":53,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`, 53.0, -32002, "Resource not found: unknown session: nope"},
		{"load from another workspace", fmt.Sprintf(`{"jsonrpc":"2.0","id":54,"method":"session/load","params":%s}`, loadIn(foreign)), 54.0, -32002, "Resource not found: session " + foreign + " was not found in this workspace"},
		{"relative cwd", fmt.Sprintf(`{"jsonrpc":"2.0","id":55,"method":"session/new","params":%s}`, newIn("src")), 55.0, -32602, "Invalid params: cwd must be an absolute path: src"},
		{"missing cwd", fmt.Sprintf(`{"jsonrpc":"2.0","id":56,"method":"session/new","params":%s}`, newIn(filepath.Join(e.cwd, "gone"))), 56.0, -32602, "Invalid params: cwd " + filepath.Join(e.cwd, "gone") + " cannot be used"},
	}
	next := 100
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			p.send(tc.line)
			f := p.next()
			code, msg := rpcError(f)
			if f["id"] != tc.id || code != tc.code || !strings.HasPrefix(msg, tc.prefix) {
				t.Errorf("answer = id %v, %v %q; want id %v, %v %q…", f["id"], code, msg, tc.id, tc.code, tc.prefix)
			}
			next++
			if ok := p.call(next, "session/list", `{}`); ok["result"] == nil {
				t.Fatalf("the agent stopped answering: %v", ok)
			}
		})
	}
	p.t = t

	// Loading a foreign session says exactly what loading a missing one says.
	_, foreignMsg := rpcError(p.call(60, "session/load", loadIn(foreign)))
	_, missingMsg := rpcError(p.call(61, "session/load", loadIn("00000000-0000-4000-8000-0000000000ff")))
	if strings.ReplaceAll(foreignMsg, foreign, "ID") != strings.ReplaceAll(missingMsg, "00000000-0000-4000-8000-0000000000ff", "ID") {
		t.Errorf("foreign %q, missing %q", foreignMsg, missingMsg)
	}
	if strings.Contains(foreignMsg, e.other) {
		t.Errorf("the error reveals the other workspace: %q", foreignMsg)
	}

	// A notification with bad params is ignored, not answered.
	p.send(`{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":42}}`)
	if f := p.call(62, "session/list", `{}`); f["result"] == nil {
		t.Fatalf("list after a bad notification: %v", f)
	}

	// Every field of session/list is optional, so params may be left out.
	p.send(`{"jsonrpc":"2.0","id":63,"method":"session/list"}`)
	if f := p.next(); f["id"] != 63.0 || f["result"] == nil {
		t.Fatalf("session/list without params: %v", f)
	}

	if err := p.in.Close(); err != nil {
		t.Fatal(err)
	}
	for f := range p.frames {
		t.Errorf("unexpected frame after stdin closed: %v", f)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("dsh acp exited with %v after stdin closed; stderr:\n%s", err, p.stderr.String())
	}
}
