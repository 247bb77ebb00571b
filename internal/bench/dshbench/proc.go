package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
)

// measured is a finished child process.
type measured struct {
	stdout []byte
	wall   time.Duration
	// cpu is the user and system time of the process and the descendants
	// it waited for: on a loaded machine, steadier than wall time.
	cpu    time.Duration
	maxRSS int64 // bytes
}

// runMeasured runs bin to completion, keeping its stdout and passing its
// stderr on, and reports its peak RSS. The kernel's maxrss of a reaped
// child also covers the descendants it waited for.
func runMeasured(ctx context.Context, bin string, args, env []string, dir string, stderr io.Writer) (measured, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	start := time.Now()
	err := cmd.Run()
	m := measured{stdout: out.Bytes(), wall: time.Since(start), maxRSS: bench.MaxRSS(cmd.ProcessState)}
	if ps := cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w", filepath.Base(bin), strings.Join(args, " "), err)
	}
	return m, nil
}

// moduleRoot finds the directory of go.mod from the working directory up.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("run dshbench inside the dsh module (no go.mod above the working directory)")
		}
		dir = parent
	}
}

// goTool is the go command; go run puts its own toolchain first on PATH.
func goTool() string { return "go" }

// binaries are the programs the benchmark runs.
type binaries struct {
	dsh string
	// tuiTest is the host/tui test binary, whose benchmark opens a
	// 10,000-event session.
	tuiTest string
	// mcpServer is internal/mcptest's MCP server.
	mcpServer string
	// floor is internal/bench/floor, the cheapest Go process.
	floor string
}

// buildBinaries builds the benchmark's programs into dir.
func buildBinaries(ctx context.Context, root, dir string) (binaries, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return binaries{}, err
	}
	b := binaries{dsh: filepath.Join(dir, "dsh"), tuiTest: filepath.Join(dir, "tui.test"), mcpServer: filepath.Join(dir, "mcpserver"),
		floor: filepath.Join(dir, "floor")}
	for _, args := range [][]string{
		{"build", "-o", b.dsh, "./cmd/dsh"},
		{"test", "-c", "-o", b.tuiTest, "./host/tui"},
		{"build", "-o", b.mcpServer, "./internal/mcptest/mcpserver"},
		{"build", "-o", b.floor, "./internal/bench/floor"},
	} {
		cmd := exec.CommandContext(ctx, goTool(), args...)
		cmd.Dir = root
		if args[len(args)-1] == "./cmd/dsh" {
			// The binary `make build` ships: static, cgo off.
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			return binaries{}, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	return b, nil
}

// machine is the line that says where the figures were measured.
type machine struct {
	CPUs         int
	MemBytes     int64
	Model        string
	OS, Arch, Go string
}

func describeMachine() machine {
	m := machine{CPUs: nproc(), OS: runtime.GOOS, Arch: runtime.GOARCH, Go: runtime.Version()}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var kb int64
			if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil {
				m.MemBytes = kb * 1024
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// nproc is what nproc(1) prints: the CPUs this process may run on.
func nproc() int {
	if out, err := exec.Command("nproc").Output(); err == nil {
		var n int
		if _, err := fmt.Sscanf(string(out), "%d", &n); err == nil && n > 0 {
			return n
		}
	}
	return runtime.NumCPU()
}

func (m machine) String() string {
	model := m.Model
	if model == "" {
		model = "unknown CPU"
	}
	return fmt.Sprintf("machine: nproc %d, memory %.1f GiB, %s, %s/%s, %s",
		m.CPUs, float64(m.MemBytes)/(1<<30), model, m.OS, m.Arch, m.Go)
}
