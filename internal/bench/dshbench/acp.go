package main

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
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// acpResult is the cold start of the built binary over ACP.
type acpResult struct {
	// Empty is a first run in an empty home: start to the initialize
	// response, and start to the first agent_message_chunk of a prompt
	// (session/new and session/prompt sent right after initialize)
	// against a local fake model server.
	EmptyInit, EmptyChunk latency
	EmptyRSS              int64
	// Corpus starts on the corpus home, whose index (opened at startup)
	// holds every session.
	CorpusInit latency
	CorpusRSS  int64
	// True is starting /bin/true to its exit: the floor of process start.
	True    latency
	TrueRSS int64
}

func measureACP(ctx context.Context, bin string, l layout, n int) (acpResult, error) {
	var res acpResult
	replies := make([]fakellm.Reply, n)
	for i := range replies {
		replies[i] = fakellm.Reply{Text: "pong from the fake model"}
	}
	llm := fakellm.New(replies...)
	defer llm.Close()
	var (
		emptyInit, emptyChunk, corpusInit, trueRuns []time.Duration
	)
	for range n {
		s, err := coldStart(ctx, bin, "", llm.URL, true)
		if err != nil {
			return res, fmt.Errorf("dsh acp in an empty home: %w", err)
		}
		emptyInit, emptyChunk = append(emptyInit, s.initialize), append(emptyChunk, s.firstChunk)
		res.EmptyRSS = max(res.EmptyRSS, s.maxRSS)

		s, err = coldStart(ctx, bin, l.home, llm.URL, false)
		if err != nil {
			return res, fmt.Errorf("dsh acp on the corpus: %w", err)
		}
		corpusInit = append(corpusInit, s.initialize)
		res.CorpusRSS = max(res.CorpusRSS, s.maxRSS)

		d, rss, err := startTrue(ctx)
		if err != nil {
			return res, err
		}
		trueRuns = append(trueRuns, d)
		res.TrueRSS = max(res.TrueRSS, rss)
	}
	res.EmptyInit, res.EmptyChunk = percentiles(emptyInit), percentiles(emptyChunk)
	res.CorpusInit, res.True = percentiles(corpusInit), percentiles(trueRuns)
	return res, nil
}

func startTrue(ctx context.Context) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, "true")
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("true: %w", err)
	}
	return time.Since(start), maxRSS(cmd.ProcessState), nil
}

type coldSample struct {
	initialize, firstChunk time.Duration
	maxRSS                 int64
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":false,"writeTextFile":false},"terminal":false}}}`

// coldStart starts dsh acp, times the initialize response and, with
// prompt, the first streamed chunk of one prompt; then closes stdin and
// waits for a clean exit. An empty home is a fresh temporary one.
func coldStart(ctx context.Context, bin, home, baseURL string, prompt bool) (coldSample, error) {
	var s coldSample
	root, err := os.MkdirTemp("", "dshbench-acp-*")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(root)
	cwd := filepath.Join(root, "ws")
	if home == "" {
		home = filepath.Join(root, "home")
	}
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return s, err
		}
	}
	cmd := exec.CommandContext(ctx, bin, "acp", "--home", home,
		"--set", "llm.provider=openai", "--set", "llm.base_url="+baseURL,
		"--set", "llm.api_key=not-a-real-key", "--set", "log.level=warn")
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
	fail := func(err error) (coldSample, error) {
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
	if _, err := await(r, 1, nil, start); err != nil {
		return fail(err)
	}
	s.initialize = time.Since(start)
	if prompt {
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd)); err != nil {
			return fail(err)
		}
		raw, err := await(r, 2, nil, start)
		if err != nil {
			return fail(err)
		}
		var created struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(raw, &created); err != nil || created.SessionID == "" {
			return fail(fmt.Errorf("session/new answered %s", raw))
		}
		if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"ping"}]}}`, created.SessionID)); err != nil {
			return fail(err)
		}
		if _, err := await(r, 3, &s.firstChunk, start); err != nil {
			return fail(err)
		}
		if s.firstChunk == 0 {
			return fail(errors.New("the prompt streamed no agent_message_chunk"))
		}
	}
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return s, fmt.Errorf("dsh acp exited with %v; stderr:\n%s", err, stderr.String())
	}
	s.maxRSS = maxRSS(cmd.ProcessState)
	return s, nil
}

// await reads frames until the response to id and returns its result,
// noting when the first agent_message_chunk arrived.
func await(r *bufio.Reader, id int, chunk *time.Duration, since time.Time) (json.RawMessage, error) {
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
				} `json:"update"`
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &f); err != nil {
			return nil, fmt.Errorf("stdout carried a line that is not a frame: %q", line)
		}
		if chunk != nil && *chunk == 0 && f.Params.Update.SessionUpdate == "agent_message_chunk" {
			*chunk = time.Since(since)
		}
		if f.ID != nil && *f.ID == id && f.Method == "" {
			if f.Error != nil {
				return nil, fmt.Errorf("request %d failed: %s", id, f.Error)
			}
			return f.Result, nil
		}
	}
}
