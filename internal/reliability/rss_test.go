package reliability

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/bench"
)

func init() { helpers["rss"] = rssHelper }

// rssHelper runs the command in DSH_REL_ARGV as its child, writes the
// child's peak RSS in bytes to DSH_REL_RSS_OUT and exits with the child's
// code. It exists because Linux charges a child started by fork or vfork
// with its parent's peak until exec: measured straight from the test
// process, which holds far more memory under the race detector and after
// earlier tests, a small dsh would report the test's own peak. Started
// fresh, this helper's own memory is all it adds.
func rssHelper() error {
	var argv []string
	if err := json.Unmarshal([]byte(os.Getenv("DSH_REL_ARGV")), &argv); err != nil {
		return err
	}
	out := os.Getenv("DSH_REL_RSS_OUT")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, helperEnv+"=") && !strings.HasPrefix(kv, "DSH_REL_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	runErr := cmd.Run()
	if cmd.ProcessState == nil {
		return runErr
	}
	if err := os.WriteFile(out, []byte(strconv.FormatInt(bench.MaxRSS(cmd.ProcessState), 10)), 0o600); err != nil {
		return err
	}
	var exit *exec.ExitError
	if errors.As(runErr, &exit) {
		os.Exit(exit.ExitCode())
	}
	return runErr
}

// rssCmd runs argv, in dir with env, through rssHelper; peak reads the
// child's peak RSS once the command has finished.
func rssCmd(t *testing.T, dir string, env []string, argv ...string) (cmd *exec.Cmd, peak func() int64) {
	t.Helper()
	raw, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "rss")
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(env, helperEnv+"=rss", "DSH_REL_ARGV="+string(raw), "DSH_REL_RSS_OUT="+out)
	return cmd, func() int64 {
		t.Helper()
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("the peak RSS was not recorded: %v", err)
		}
		n, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
}
