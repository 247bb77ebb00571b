package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
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
	var dsh []bench.ColdStart
	for range n {
		f, err := catFloor()
		if err != nil {
			return fmt.Errorf("cat: %w", err)
		}
		floor = append(floor, f)
		s, err := bench.ACPColdStart(context.Background(), bench.ColdStartOptions{Bin: abs, BaseURL: llm.URL, Prompt: true})
		if err != nil {
			return fmt.Errorf("dsh: %w", err)
		}
		dsh = append(dsh, s)
	}
	pick := func(f func(bench.ColdStart) time.Duration) time.Duration {
		var ds []time.Duration
		for _, s := range dsh {
			ds = append(ds, f(s))
		}
		return median(ds)
	}
	fmt.Fprintf(out, "ACP cold start, median of %d (dsh %s)\n", n, abs)
	fmt.Fprintf(out, "  %-44s %8s\n", "cat: start to the echoed initialize line", ms(median(floor)))
	fmt.Fprintf(out, "  %-44s %8s\n", "dsh acp: start to the initialize response", ms(pick(func(s bench.ColdStart) time.Duration { return s.Initialize })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + session/new answered", ms(pick(func(s bench.ColdStart) time.Duration { return s.NewSession })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + first agent_message_chunk of a prompt", ms(pick(func(s bench.ColdStart) time.Duration { return s.FirstChunk })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + prompt answered (end_turn)", ms(pick(func(s bench.ColdStart) time.Duration { return s.Prompt })))
	fmt.Fprintf(out, "  %-44s %8s\n", "  + exited after stdin closed", ms(pick(func(s bench.ColdStart) time.Duration { return s.Exit })))
	return nil
}

// initializeLine is what the cat floor echoes back.
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

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
