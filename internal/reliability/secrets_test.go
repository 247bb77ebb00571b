package reliability

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// TestTheModelKeyNeverReachesTheModel runs the real dsh binary with the key
// in its environment (under each name dsh reads it from) and a model that
// asks bash to print its environment and to open dsh's. Issue 13 finding 6:
// env printed DEEPSEEK_API_KEY into the session log, the index and the next
// model request. The command output reaches the fake model in the second
// request; the key must not, nor the session log.
func TestTheModelKeyNeverReachesTheModel(t *testing.T) {
	const key = "sk-reliability-secret-0123456789"
	// Print the command's environment two ways, and try dsh's: a child of
	// a non-dumpable process cannot open /proc/$PPID/environ (root can:
	// CAP_SYS_PTRACE overrides it, so that part is checked only as a user).
	probe := `env; echo ---; tr '\0' '\n' < /proc/self/environ; echo ---; ` +
		`if cat /proc/$PPID/environ >/dev/null 2>&1; then echo PARENT-READABLE; else echo PARENT-DENIED; fi`
	args, err := jsonString(map[string]any{"command": probe, "description": "look for the key"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"DEEPSEEK_API_KEY", []string{"DEEPSEEK_API_KEY=" + key}, nil},
		{"DSH_LLM_API_KEY", []string{"DSH_LLM_API_KEY=" + key}, nil},
		{"llm.api_key_env", []string{"MY_VENDOR_KEY=" + key}, []string{"--set", "llm.api_key_env=MY_VENDOR_KEY"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakellm.New(
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "bash", Arguments: args}}},
				fakellm.Reply{Text: "done"},
			)
			defer srv.Close()
			h := newHermetic(t)
			argv := append([]string{"run", "--set", "llm.base_url=" + srv.URL, "--set", "permissions.mode=bypass"}, tt.args...)
			stdout, stderr, err := dshIn(t, h, tt.env, append(argv, "find my key")...)
			if err != nil {
				t.Fatalf("dsh run: %v; stdout %q; stderr:\n%s", err, stdout, stderr)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the model got %d requests, want 2 (the tool result travels in the second)", len(reqs))
			}
			sent := string(reqs[1])
			if !strings.Contains(sent, "PATH=") || !strings.Contains(sent, "PARENT-") {
				t.Fatalf("the tool result did not reach the model, so the test proves nothing:\n%s", sent)
			}
			if strings.Contains(sent, key) {
				t.Errorf("the key reached the model through bash:\n%s", sent)
			}
			if os.Geteuid() != 0 && !strings.Contains(sent, "PARENT-DENIED") {
				t.Errorf("bash could read dsh's /proc/PID/environ: dsh is not non-dumpable")
			}
			logs, _ := filepath.Glob(filepath.Join(h.home, "sessions", "*", "*", "session.jsonl"))
			if len(logs) != 1 {
				t.Fatalf("session logs %q", logs)
			}
			if b, err := os.ReadFile(logs[0]); err != nil || strings.Contains(string(b), key) {
				t.Errorf("the session log holds the key (err %v)", err)
			}
		})
	}
}

func jsonString(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}
