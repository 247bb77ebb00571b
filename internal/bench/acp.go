package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ColdStart is one cold start of `dsh acp`, each step timed from the end of
// the one before it (Initialize from process start).
type ColdStart struct {
	Initialize time.Duration // start to the initialize response
	List       time.Duration // session/list (first page) answered, when asked
	Listed     int           // sessions on that first page
	Load       time.Duration // session/load answered, its replay before it, when asked
	Replayed   int           // session/update frames of that replay
	NewSession time.Duration // session/new answered
	FirstChunk time.Duration // prompt sent to its first agent_message_chunk
	// StartToFirstChunk is process start to that first chunk.
	StartToFirstChunk time.Duration
	// ToolCall is the prompt's first tool card from its tool_call to the
	// update that finishes it (completed or failed), when the model was
	// scripted to call a tool.
	ToolCall time.Duration
	// ToolOutput is that update's text content, for checking what the
	// tool returned.
	ToolOutput string
	// LiveOutput is, for a command that prints "live-ns=N" (N its clock
	// in Unix nanoseconds just before it wrote the line), the time from N
	// to the first in-progress tool_call_update that shows the line.
	LiveOutput time.Duration
	Prompt     time.Duration // prompt sent to its response
	Exit       time.Duration // stdin closed to a clean exit
	MaxRSS     int64         // the process's peak resident set, bytes
}

// ColdStartOptions configures ACPColdStart.
type ColdStartOptions struct {
	Bin string
	// Home is the dsh home; empty means a fresh temporary one.
	Home string
	// BaseURL is an OpenAI-compatible endpoint (a local fake server).
	BaseURL string
	// Prompt also opens a session and sends one prompt; otherwise only
	// initialize is timed.
	Prompt bool
	// List also asks for the first page of session/list right after
	// initialize (of ListCwd's sessions when set).
	List    bool
	ListCwd string
	// Load, when set, also loads this session (of LoadCwd) after that.
	Load, LoadCwd string
	// MCPServers are sent in session/new's mcpServers.
	MCPServers []StdioServer
	// Set adds --set flags (key=value) to the command line.
	Set []string
}

// StdioServer is one stdio entry of session/new's mcpServers.
type StdioServer struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
}

// mcpServersJSON renders servers as ACP's mcpServers array.
func mcpServersJSON(servers []StdioServer) (string, error) {
	type envVar struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	}
	type entry struct {
		Name    string   `json:"name"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Env     []envVar `json:"env"`
	}
	out := make([]entry, 0, len(servers))
	for _, s := range servers {
		e := entry{Name: s.Name, Command: s.Command, Args: append([]string{}, s.Args...), Env: []envVar{}}
		for k, v := range s.Env {
			e.Env = append(e.Env, envVar{k, v})
		}
		out = append(out, e)
	}
	b, err := json.Marshal(out)
	return string(b), err
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}`

// ACPColdStart starts `dsh acp` in a fresh workspace, drives it as an editor
// would and returns the timings. Stdout must carry frames only: any other
// line fails the run.
func ACPColdStart(ctx context.Context, o ColdStartOptions) (ColdStart, error) {
	var s ColdStart
	root, err := os.MkdirTemp("", "dsh-coldstart-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(root)
	cwd, home := filepath.Join(root, "ws"), o.Home
	if home == "" {
		home = filepath.Join(root, "home")
	}
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return s, err
		}
	}
	args := []string{"acp", "--home", home,
		"--set", "llm.provider=openai", "--set", "llm.base_url=" + o.BaseURL,
		"--set", "llm.api_key=not-a-real-key", "--set", "log.level=warn"}
	for _, kv := range o.Set {
		args = append(args, "--set", kv)
	}
	servers, err := mcpServersJSON(o.MCPServers)
	if err != nil {
		return s, err
	}
	cmd := exec.CommandContext(ctx, o.Bin, args...)
	cmd.Dir = cwd
	cmd.Env = []string{"HOME=" + root, "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	r := bufio.NewReaderSize(out, 1<<20)
	fail := func(err error) (ColdStart, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return s, fmt.Errorf("%w; stderr:\n%s", err, stderr.String())
	}
	send := func(line string) error {
		_, err := io.WriteString(in, line+"\n")
		return err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	if err := send(initializeLine); err != nil {
		return fail(err)
	}
	if _, err := await(r, 1, &watch{}); err != nil {
		return fail(err)
	}
	s.Initialize = time.Since(start)
	if o.List {
		t := time.Now()
		params := `{}`
		if o.ListCwd != "" {
			params = fmt.Sprintf(`{"cwd":%q}`, o.ListCwd)
		}
		if err := send(`{"jsonrpc":"2.0","id":9,"method":"session/list","params":` + params + `}`); err != nil {
			return fail(err)
		}
		raw, err := await(r, 9, &watch{})
		if err != nil {
			return fail(err)
		}
		s.List = time.Since(t)
		var page struct {
			Sessions []json.RawMessage `json:"sessions"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return fail(fmt.Errorf("session/list answered %s", raw))
		}
		s.Listed = len(page.Sessions)
	}
	if o.Load != "" {
		t := time.Now()
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"session/load","params":{"sessionId":%q,"cwd":%q,"mcpServers":[]}}`, o.Load, o.LoadCwd)); err != nil {
			return fail(err)
		}
		w := &watch{}
		if _, err := await(r, 8, w); err != nil {
			return fail(err)
		}
		s.Load, s.Replayed = time.Since(t), w.updates
	}
	if o.Prompt {
		t := time.Now()
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":%s}}`, cwd, servers)); err != nil {
			return fail(err)
		}
		raw, err := await(r, 2, &watch{})
		if err != nil {
			return fail(err)
		}
		var created struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(raw, &created); err != nil || created.SessionID == "" {
			return fail(fmt.Errorf("session/new answered %s", raw))
		}
		s.NewSession = time.Since(t)
		t = time.Now()
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"ping"}]}}`, created.SessionID)); err != nil {
			return fail(err)
		}
		w := &watch{since: t, chunk: true, tool: true, live: true}
		if _, err := await(r, 3, w); err != nil {
			return fail(err)
		}
		s.FirstChunk, s.ToolCall, s.ToolOutput, s.LiveOutput = w.firstChunk, w.toolCall, w.toolOutput, w.liveOutput
		if s.FirstChunk == 0 {
			return fail(errors.New("the prompt streamed no agent_message_chunk"))
		}
		s.StartToFirstChunk = t.Sub(start) + s.FirstChunk
		s.Prompt = time.Since(t)
	}
	t := time.Now()
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return s, fmt.Errorf("dsh acp exited with %v; stderr:\n%s", err, stderr.String())
	}
	s.Exit = time.Since(t)
	s.MaxRSS = MaxRSS(cmd.ProcessState)
	return s, nil
}

// watch says what await notes on the way to an answer, and holds it.
type watch struct {
	// since is when the request was sent.
	since time.Time
	// chunk notes when the first agent_message_chunk arrived; tool how
	// long the first tool card took from its tool_call to its final update
	// (completed or failed), and that update's status and text; live how
	// long a "live-ns=N" line took from the command's clock to an
	// in-progress update showing it.
	chunk, tool, live bool

	firstChunk, toolCall, liveOutput time.Duration
	toolOutput                       string
	// updates counts the session/update frames before the answer.
	updates int
}

// liveMark is the line a streaming command prints for LiveOutput.
var liveMark = regexp.MustCompile(`live-ns=(\d+)`)

// await reads frames until the response to id and returns its result,
// noting on the way what w asks for.
func await(r *bufio.Reader, id int, w *watch) (json.RawMessage, error) {
	var toolID string
	var toolStart time.Time
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading frames: %w", err)
		}
		var f struct {
			ID     *int            `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
			Params struct {
				Update struct {
					SessionUpdate string `json:"sessionUpdate"`
					ToolCallID    string `json:"toolCallId"`
					Status        string `json:"status"`
					// An array of tool call content in a tool_call_update,
					// one content block in a message chunk.
					Content json.RawMessage `json:"content"`
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			return nil, fmt.Errorf("stdout carried a line that is not a frame: %q", line)
		}
		if f.Method == "session/request_permission" {
			return nil, errors.New("dsh asked for a permission, which the benchmark does not answer (run it in bypass mode)")
		}
		if f.Method == "session/update" {
			w.updates++
		}
		u := f.Params.Update
		if w.live && w.liveOutput == 0 && u.SessionUpdate == "tool_call_update" && u.Status == "in_progress" {
			if m := liveMark.FindSubmatch(u.Content); m != nil {
				if ns, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
					w.liveOutput = max(time.Duration(time.Now().UnixNano()-ns), 1)
				}
			}
		}
		if w.chunk && w.firstChunk == 0 && u.SessionUpdate == "agent_message_chunk" {
			w.firstChunk = time.Since(w.since)
		}
		if w.tool && w.toolCall == 0 {
			switch {
			case u.SessionUpdate == "tool_call" && toolID == "":
				toolID, toolStart = u.ToolCallID, time.Now()
			case u.SessionUpdate == "tool_call_update" && u.ToolCallID == toolID && (u.Status == "completed" || u.Status == "failed"):
				w.toolCall = time.Since(toolStart)
				w.toolOutput = u.Status
				var content []struct {
					Content struct {
						Text string `json:"text"`
					} `json:"content"`
				}
				_ = json.Unmarshal(u.Content, &content)
				for _, c := range content {
					w.toolOutput += "\n" + c.Content.Text
				}
			}
		}
		if f.ID != nil && *f.ID == id && f.Method == "" {
			if f.Error != nil {
				return nil, fmt.Errorf("request %d failed: %s", id, f.Error)
			}
			return f.Result, nil
		}
	}
}

// MaxRSS is a finished process's peak resident set in bytes (0 if unknown).
func MaxRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return 0
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return 0
}
