package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

func main() {
	bin := flag.String("bin", "bin/dsh", "the dsh binary to start")
	n := flag.Int("n", 10, "cold starts to measure")
	flag.Parse()
	if err := run(os.Stdout, *bin, *n); err != nil {
		fmt.Fprintln(os.Stderr, "acpcold:", err)
		os.Exit(1)
	}
}

// sample is one cold start.
type sample struct {
	initialize, newSession, firstChunk, prompt, exit time.Duration
}

func run(out io.Writer, bin string, n int) error {
	if n < 1 {
		return errors.New("-n must be at least 1")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("%w (build it with make build, or pass -bin)", err)
	}
	replies := make([]fakellm.Reply, n)
	for i := range replies {
		replies[i] = fakellm.Reply{Text: "pong"}
	}
	llm := fakellm.New(replies...)
	defer llm.Close()

	var floor []time.Duration
	var dsh []sample
	for range n {
		f, err := catFloor()
		if err != nil {
			return fmt.Errorf("cat: %w", err)
		}
		floor = append(floor, f)
		s, err := coldStart(abs, llm.URL)
		if err != nil {
			return fmt.Errorf("dsh: %w", err)
		}
		dsh = append(dsh, s)
	}
	pick := func(f func(sample) time.Duration) time.Duration {
		var ds []time.Duration
		for _, s := range dsh {
			ds = append(ds, f(s))
		}
		return median(ds)
	}
	fmt.Fprintf(out, "ACP cold start, median of %d (dsh %s)\n", n, abs)
	fmt.Fprintf(out, "  %-44s %8s\n", "cat: start to the echoed initialize line", ms(median(floor)))
	fmt.Fprintf(out, "  %-44s %8s\n", "dsh acp: start to the initialize response", ms(pick(func(s sample) time.Duration { return s.initialize })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + session/new answered", ms(pick(func(s sample) time.Duration { return s.newSession })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + first agent_message_chunk of a prompt", ms(pick(func(s sample) time.Duration { return s.firstChunk })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + prompt answered (end_turn)", ms(pick(func(s sample) time.Duration { return s.prompt })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + exited after stdin closed", ms(pick(func(s sample) time.Duration { return s.exit })))
	return nil
}

const initializeLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`

// catFloor starts cat, writes the initialize line and reads it back.
func catFloor() (time.Duration, error) {
	cmd := exec.Command("cat")
	in, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(in, initializeLine+"\n"); err != nil {
		return 0, err
	}
	if _, err := bufio.NewReader(outPipe).ReadString('\n'); err != nil {
		return 0, err
	}
	d := time.Since(start)
	_ = in.Close()
	return d, cmd.Wait()
}

// coldStart runs one dsh acp process in a fresh home and workspace.
func coldStart(bin, baseURL string) (sample, error) {
	var s sample
	root, err := os.MkdirTemp("", "dsh-acpcold-")
	if err != nil {
		return s, err
	}
	defer os.RemoveAll(root)
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "ws")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return s, err
		}
	}
	cmd := exec.Command(bin, "acp", "--home", home,
		"--set", "llm.provider=openai", "--set", "llm.base_url="+baseURL,
		"--set", "llm.api_key=not-a-real-key", "--set", "log.level=warn")
	cmd.Dir = cwd
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	r := bufio.NewReaderSize(outPipe, 1<<20)
	send := func(line string) error {
		_, err := io.WriteString(in, line+"\n")
		return err
	}
	// await reads frames until the answer to id, noting the first
	// agent_message_chunk.
	await := func(id int, chunk *time.Duration, since time.Time) error {
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return fmt.Errorf("reading frames: %w; stderr:\n%s", err, stderr.String())
			}
			var f struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Error  json.RawMessage `json:"error"`
				Params struct {
					Update struct {
						SessionUpdate string `json:"sessionUpdate"`
					} `json:"update"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(line), &f); err != nil {
				return fmt.Errorf("stdout carried a line that is not a frame: %q", line)
			}
			if chunk != nil && *chunk == 0 && f.Params.Update.SessionUpdate == "agent_message_chunk" {
				*chunk = time.Since(since)
			}
			if f.ID != nil && *f.ID == id && f.Method == "" {
				if f.Error != nil {
					return fmt.Errorf("request %d failed: %s", id, f.Error)
				}
				return nil
			}
		}
	}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	defer func() { _ = cmd.Process.Kill() }()
	if err := send(initializeLine); err != nil {
		return s, err
	}
	if err := await(1, nil, start); err != nil {
		return s, err
	}
	s.initialize = time.Since(start)

	t := time.Now()
	if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd)); err != nil {
		return s, err
	}
	var created struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	line, err := r.ReadString('\n')
	if err != nil || json.Unmarshal([]byte(line), &created) != nil || created.Result.SessionID == "" {
		return s, fmt.Errorf("session/new: %q %v; stderr:\n%s", line, err, stderr.String())
	}
	s.newSession = time.Since(t)

	t = time.Now()
	if err := send(fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"ping"}]}}`, created.Result.SessionID)); err != nil {
		return s, err
	}
	if err := await(3, &s.firstChunk, t); err != nil {
		return s, err
	}
	s.prompt = time.Since(t)

	t = time.Now()
	_ = in.Close()
	if err := cmd.Wait(); err != nil {
		return s, fmt.Errorf("dsh acp exited with %v; stderr:\n%s", err, stderr.String())
	}
	s.exit = time.Since(t)
	return s, nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
