package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/benchcorpus"
)

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "dshbench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if o.part != "" {
		err = runPart(ctx, o, os.Stdout, os.Stderr)
	} else {
		err = run(ctx, o, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dshbench:", err)
		os.Exit(1)
	}
}

// options are the command's flags; a child process gets the same ones
// plus -part.
type options struct {
	preset  string
	dir     string
	runs    int
	acpRuns int
	part    string
	// profile is a directory that receives one CPU profile per part.
	profile string
	// wholeOnly builds the index and measures only the whole-process rows.
	wholeOnly bool
	// mcpOnly measures only the MCP rows, which need no corpus.
	mcpOnly bool
	// sandboxOnly measures only the sandbox rows, which need no corpus.
	sandboxOnly bool
}

func parseFlags(args []string) (options, error) {
	var o options
	fs := flag.NewFlagSet("dshbench", flag.ContinueOnError)
	fs.StringVar(&o.preset, "preset", "large", "corpus preset: small (1,000 sessions, ~200k events), large (10,000 sessions, ~2M events), huge (100 sessions of 10,000-20,000 events) or tiny (50,000 one-turn sessions)")
	fs.StringVar(&o.dir, "dir", os.Getenv("BENCH_CORPUS_DIR"), "directory holding the corpus, built once and reused (default $BENCH_CORPUS_DIR, else a temporary directory removed afterwards)")
	fs.IntVar(&o.runs, "runs", 21, "measured runs per search (after 2 warm-up runs)")
	fs.IntVar(&o.acpRuns, "acp-runs", 10, "ACP cold starts per measurement")
	fs.StringVar(&o.part, "part", "", "run one part and print its result as JSON (internal: the parent re-executes itself with it)")
	fs.BoolVar(&o.wholeOnly, "whole-only", false, "build the index, then measure only the whole-process rows (the built binary as a user runs it)")
	fs.BoolVar(&o.mcpOnly, "mcp-only", false, "measure only the MCP and live-output rows (dsh acp with three stdio MCP servers, a streaming command; no corpus is built)")
	fs.BoolVar(&o.sandboxOnly, "sandbox-only", false, "measure only the sandbox rows (true started through the sandbox launcher; no corpus is built)")
	fs.StringVar(&o.profile, "cpuprofile", "", "directory that receives a CPU profile of each part (<part>.pprof)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, err := benchcorpus.Preset(o.preset); err != nil {
		return o, err
	}
	if o.runs < 1 || o.acpRuns < 1 {
		return o, errors.New("-runs and -acp-runs must be at least 1")
	}
	return o, nil
}

// layout names the files of a corpus directory: a dsh home whose sessions
// are the corpus, so that a composition opened on it sees what a user with
// that history would.
type layout struct {
	dir      string
	home     string
	sessions string
	index    string
	bare     string
	bin      string
	manifest string
}

func layoutOf(dir string) layout {
	home := filepath.Join(dir, "home")
	return layout{
		dir:      dir,
		home:     home,
		sessions: filepath.Join(home, "sessions"),
		index:    filepath.Join(home, "session-query.db"),
		bare:     filepath.Join(dir, "bare", "bare.db"),
		bin:      filepath.Join(dir, "bin"),
		manifest: filepath.Join(dir, "corpus.json"),
	}
}

// run is the parent: it prepares the corpus and the binaries, runs every
// part and prints the table.
func run(ctx context.Context, o options, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "dshbench: "+format+"\n", args...) }
	if o.dir == "" {
		tmp, err := os.MkdirTemp("", "dshbench-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		o.dir = tmp
	}
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return err
	}
	o.dir = abs
	l := layoutOf(o.dir)
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	rep := &report{machine: describeMachine(), preset: o.preset}
	if o.sandboxOnly {
		logf("building the dsh binary…")
		bins, err := buildBinaries(ctx, root, l.bin)
		if err != nil {
			return err
		}
		logf("sandboxed command start-up…")
		if rep.sandbox, err = measureSandbox(ctx, bins.dsh, o.runs*5); err != nil {
			return err
		}
		rep.printSandboxOnly(stdout)
		return nil
	}
	if o.mcpOnly {
		logf("building the dsh binary and the MCP test server…")
		bins, err := buildBinaries(ctx, root, l.bin)
		if err != nil {
			return err
		}
		logf("dsh acp with MCP servers…")
		if rep.mcp, err = measureMCP(ctx, bins.dsh, bins.mcpServer, o.acpRuns); err != nil {
			return err
		}
		logf("dsh acp streaming a command's output…")
		if rep.live, err = measureLive(ctx, bins.dsh, o.acpRuns); err != nil {
			return err
		}
		rep.printMCPOnly(stdout)
		return nil
	}
	// A new corpus is generated in a child: Linux counts a parent's peak
	// RSS at fork in every child's maxrss, so a parent that generated
	// gigabytes would report that for every part and command after it.
	generated := false
	if _, err := os.Stat(l.manifest); errors.Is(err, fs.ErrNotExist) {
		if _, err := child(ctx, o, "corpus", &rep.corpus, stderr); err != nil {
			return fmt.Errorf("part corpus: %w", err)
		}
		generated = true
	}
	if rep.corpus, err = ensureCorpus(ctx, l, o.preset, logf); err != nil {
		return err
	}
	rep.corpus.Reused = !generated
	ws, err := ensureWorkspace(ctx, l)
	if err != nil {
		return err
	}
	logf("building the dsh binary and the TUI benchmark…")
	bins, err := buildBinaries(ctx, root, l.bin)
	if err != nil {
		return err
	}
	dshBin := bins.dsh
	for _, p := range []struct {
		name string
		out  any
		rss  *int64
	}{
		{"build", &rep.build, &rep.rss.build},
		{"bare", &rep.bare, &rep.rss.bare},
		{"search", &rep.search, &rep.rss.search},
		{"reconcile", &rep.reconcile, &rep.rss.reconcile},
		{"tool", &rep.tool, &rep.rss.tool},
		{"big-without", &rep.big.without, &rep.rss.bigWithout},
		{"big-with", &rep.big.with, &rep.rss.bigWith},
	} {
		if o.wholeOnly && p.name != "build" {
			continue
		}
		logf("part %s…", p.name)
		start := time.Now()
		rss, err := child(ctx, o, p.name, p.out, stderr)
		if err != nil {
			return fmt.Errorf("part %s: %w", p.name, err)
		}
		*p.rss = rss
		logf("part %s done in %s (peak RSS %d MB)", p.name, time.Since(start).Round(time.Millisecond), rss>>20)
	}
	if o.wholeOnly {
		logf("whole-process rows (the built binary, a new process each run)…")
		if rep.whole, err = measureWhole(ctx, bins, l, ws, o.runs, logf); err != nil {
			return err
		}
		rep.printWholeOnly(stdout)
		return nil
	}
	logf("rg…")
	if rep.rg, err = measureRG(ctx, l.sessions, o.runs); err != nil {
		return err
	}
	logf("ACP cold starts…")
	if rep.acp, err = measureACP(ctx, dshBin, l, o.acpRuns); err != nil {
		return err
	}
	logf("dsh acp with MCP servers…")
	if rep.mcp, err = measureMCP(ctx, dshBin, bins.mcpServer, o.acpRuns); err != nil {
		return err
	}
	logf("dsh acp streaming a command's output…")
	if rep.live, err = measureLive(ctx, dshBin, o.acpRuns); err != nil {
		return err
	}
	logf("sandboxed command start-up…")
	if rep.sandbox, err = measureSandbox(ctx, dshBin, o.runs*5); err != nil {
		return err
	}
	logf("TUI…")
	if rep.tui, err = measureTUI(ctx, bins.tuiTest); err != nil {
		return err
	}
	logf("whole-process rows (the built binary, a new process each run)…")
	if rep.whole, err = measureWhole(ctx, bins, l, ws, o.runs, logf); err != nil {
		return err
	}
	var self syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err == nil {
		rep.rssFloor = self.Maxrss * 1024
	}
	rep.print(stdout)
	return nil
}

// child runs one part in a fresh process and decodes its JSON result into
// out; it returns the child's peak RSS in bytes.
func child(ctx context.Context, o options, part string, out any, stderr io.Writer) (int64, error) {
	self, err := os.Executable()
	if err != nil {
		return 0, err
	}
	args := []string{"-part", part, "-dir", o.dir, "-preset", o.preset, "-runs", fmt.Sprint(o.runs), "-acp-runs", fmt.Sprint(o.acpRuns), "-cpuprofile", o.profile}
	res, err := runMeasured(ctx, self, args, nil, "", stderr)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(res.stdout, out); err != nil {
		return 0, fmt.Errorf("decode the result %q: %w", res.stdout, err)
	}
	return res.maxRSS, nil
}
