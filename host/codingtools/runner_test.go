package codingtools

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeRunner is a front end's runner: it records the command and answers
// with scripted output and result.
type fakeRunner struct {
	got    Command
	output string
	res    RunResult
}

func (f *fakeRunner) Run(_ context.Context, c Command, out io.Writer) (RunResult, error) {
	f.got = c
	_, _ = io.WriteString(out, f.output)
	return f.res, nil
}

func TestBashRunsThroughTheInstalledRunner(t *testing.T) {
	ws := workspace(t)
	t.Setenv("DEEPSEEK_API_KEY", "sk-secret")
	t.Setenv("DSH_TEST_DENIED", "x")
	t.Setenv("DSH_TEST_KEPT", "y")
	s := testSet(t, func(c *Config) { c.Bash.Env.Deny = "DSH_TEST_DENIED" })
	cases := []struct {
		name string
		run  fakeRunner
		want string
	}{
		{"exit code", fakeRunner{output: "hi\n", res: RunResult{ExitCode: 2}}, "hi\n[exit code: 2]"},
		{"signal", fakeRunner{output: "x", res: RunResult{Signal: "SIGTERM"}}, "x\n[killed by signal: SIGTERM]"},
		{"timeout", fakeRunner{res: RunResult{Cause: StopTimeout}}, "(no output)\n[timed out after 5000ms]"},
		{"cancel", fakeRunner{res: RunResult{Cause: StopCanceled}}, "(no output)\n[cancelled: the command was stopped]"},
		{"note", fakeRunner{output: "tail\n", res: RunResult{Note: "[the editor kept only the end]"}}, "[the editor kept only the end]\ntail\n[exit code: 0]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run
			ctx := WithRunner(context.Background(), &r)
			got, err := s.exec(t, ctx, mkCall(t, "bash", nil, ws, bashCall(t, ws, "make it", map[string]any{"timeout_ms": 5000})))
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("result = %q, want %q", got, tc.want)
			}
			if r.got.Line != "make it" || r.got.Dir != ws || r.got.Timeout != 5*time.Second {
				t.Errorf("command = %+v", r.got)
			}
			env := strings.Join(r.got.Env, "\n")
			if strings.Contains(env, "sk-secret") || strings.Contains(env, "DSH_TEST_DENIED") || !strings.Contains(env, "DSH_TEST_KEPT=y") {
				t.Errorf("env not filtered: %q", r.got.Env)
			}
			for _, h := range []string{"DEEPSEEK_API_KEY", "OPENAI_API_KEY", "DSH_TEST_DENIED"} {
				if !slices.Contains(r.got.Hidden, h) {
					t.Errorf("Hidden %q lacks %s", r.got.Hidden, h)
				}
			}
			if slices.Contains(r.got.Hidden, "DSH_TEST_KEPT") {
				t.Errorf("Hidden %q names a passed variable", r.got.Hidden)
			}
		})
	}
}
