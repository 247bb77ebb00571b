package codingtools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// mounted is a host with the coding tools and permissions plugins started
// over real config, as a composition would mount them.
type mounted struct {
	h        *host.Host
	reg      *tools.Registry
	prompts  *prompt.Registry
	sessions *session.Registry
	perms    *permissions.Service
}

func mount(t *testing.T, sets ...string) (*mounted, error) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(config.Options{
		Home:     filepath.Join(dir, "home"),
		Cwd:      dir,
		Env:      func(string) (string, bool) { return "", false },
		Set:      sets,
		Sections: []config.Schema{ConfigSchema, permissions.ConfigSchema},
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	m := &mounted{h: host.New(nil), reg: tools.NewRegistry(nil), prompts: prompt.NewRegistry(), sessions: session.NewRegistry()}
	for _, err := range []error{
		provide(m.h, tools.ServiceKey, m.reg),
		provide(m.h, prompt.ServiceKey, m.prompts),
		provide(m.h, session.RegistryKey, m.sessions),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = m.h.Close() })
	if err := m.h.Start([]host.Plugin{Plugin(), permissions.Plugin()}, cfg); err != nil {
		return nil, err
	}
	m.perms, _ = host.Get(m.h, permissions.ServiceKey)
	return m, nil
}

func provide[T any](h *host.Host, k host.Key[T], v T) error {
	_, err := host.Provide(h, k, "", v)
	return err
}

func TestPluginRegistersToolsAndPromptSections(t *testing.T) {
	m, err := mount(t)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range m.reg.Schemas() {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, ","); got != "bash,edit,glob,grep,read,todo_write,write" {
		t.Fatalf("tools = %s", got)
	}
	secs, err := m.prompts.Sections(prompt.Scope{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	var sectionNames []string
	for _, s := range secs {
		sectionNames = append(sectionNames, s.Name)
	}
	if got := strings.Join(sectionNames, ","); got != "tool:read,tool:write,tool:edit,tool:glob,tool:grep,tool:bash" {
		t.Fatalf("sections = %s", got)
	}
	if err := m.h.Close(); err != nil {
		t.Fatal(err)
	}
	if len(m.reg.Schemas()) != 0 {
		t.Error("dispose left tools registered")
	}
	if secs, _ := m.prompts.Sections(prompt.Scope{}); len(secs) != 0 {
		t.Error("dispose left prompt sections")
	}
}

func TestPluginDecodesTheToolsSection(t *testing.T) {
	m, err := mount(t, "tools.bash.max_output_bytes=64", "tools.bash.default_timeout_ms=1000", "tools.read.default_limit=7")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := m.reg.Get("bash")
	if !strings.Contains(d.Description, "longer than 64 bytes") || !strings.Contains(d.Description, "1000 by default") {
		t.Errorf("bash description does not reflect config: %s", d.Description)
	}
	r, _ := m.reg.Get("read")
	if !strings.Contains(string(r.Parameters.Canonical()), "Defaults to 7.") {
		t.Errorf("read schema does not reflect config: %s", r.Parameters.Canonical())
	}
}

// TestConfigSchemaRejectsInvalidValues pins the tools section's rules, which
// the loader applies in every layer so the plugin never checks them again.
func TestConfigSchemaRejectsInvalidValues(t *testing.T) {
	cases := []struct{ set, want string }{
		{"tools.bash.max_output_bytes=0", `config key "tools.bash.max_output_bytes" in flag --set tools.bash.max_output_bytes=0 must be a positive integer (got 0)`},
		{"tools.bash.default_timeout_ms=700000", `config key "tools.bash.default_timeout_ms" in flag --set tools.bash.default_timeout_ms=700000 must be at most tools.bash.max_timeout_ms (600000, from default)`},
		{"tools.search.timeout_ms=3000000000", `config key "tools.search.timeout_ms" in flag --set tools.search.timeout_ms=3000000000 must be at most 2147483647 (got 3000000000)`},
		{"tools.bash.env.deny=AWS_[", `must list variable names or patterns such as AWS_* separated by commas ("AWS_[" is not a valid pattern)`},
		{"tools.bash.shell=zsh", `unknown config key "tools.bash.shell"`},
	}
	for _, tc := range cases {
		dir := t.TempDir()
		_, err := config.Load(config.Options{Home: dir, Cwd: dir, Env: func(string) (string, bool) { return "", false },
			Set: []string{tc.set}, Sections: []config.Schema{ConfigSchema}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.set, err, tc.want)
		}
	}
}

// TestDefaultConfigIsTheEmbeddedDefaults pins that a plugin started without
// a config source gets the values configs/default.yaml documents.
func TestDefaultConfigIsTheEmbeddedDefaults(t *testing.T) {
	c := DefaultConfig()
	if c.MaxFileBytes != 10<<20 || c.Bash.DefaultTimeoutMs != 120000 || c.Bash.MaxTimeoutMs != 600000 ||
		c.Bash.MaxOutputBytes != 30000 || c.Bash.SavedOutput.MaxBytes != 100<<20 || c.Bash.SavedOutput.KeepDays != 7 ||
		c.Bash.SavedOutput.KeepTotalBytes != 1<<30 || c.Read.DefaultLimit != 2000 || c.Search.MaxResults != 200 ||
		c.Search.TimeoutMs != 30000 || c.Bash.KillGraceMs != 2000 || c.Read.MaxLineBytes != 2000 || c.Read.MaxOutputBytes != 100000 {
		t.Errorf("DefaultConfig() = %+v", c)
	}
	bad := DefaultConfig()
	bad.Read.MaxLineBytes = 8
	if _, err := New(bad, Options{}); err == nil || !strings.Contains(err.Error(), "Config.Read.MaxLineBytes must be at least 16 (got 8)") {
		t.Errorf("New with a tiny line limit: err = %v", err)
	}
}

// fakeApprover answers with a fixed outcome and records the reasons.
type fakeApprover struct {
	outcome string
	asked   []string
}

func (f *fakeApprover) Approve(_ context.Context, call *tools.Call, reason string) (string, error) {
	f.asked = append(f.asked, call.Name+": "+reason)
	return f.outcome, nil
}

func text(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

func pipelineCall(name string, live *session.Live, cwd string, args any) *tools.Call {
	b, _ := json.Marshal(args)
	return &tools.Call{CallID: "c-" + name, Name: name, Arguments: string(b), Session: live, Cwd: cwd}
}

func TestWriteOutsideTheWorkspaceAsksForApproval(t *testing.T) {
	m, err := mount(t, "permissions.mode=accept-edits")
	if err != nil {
		t.Fatal(err)
	}
	root := workspace(t)
	ws, elsewhere := filepath.Join(root, "ws"), filepath.Join(root, "elsewhere")
	for _, d := range []string{ws, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	live := newLive(t, "s1", ws)
	ap := &fakeApprover{outcome: tools.Rejected}
	t.Cleanup(m.reg.SetApprover(ap))
	ctx := context.Background()

	// Inside the workspace, accept-edits writes without asking.
	if res := m.reg.Run(ctx, pipelineCall("write", live, ws, map[string]any{"file_path": "in.txt", "content": "x"})); res.IsError {
		t.Fatalf("inside write: %s", text(res))
	}
	target := filepath.Join(elsewhere, "out.txt")
	res := m.reg.Run(ctx, pipelineCall("write", live, ws, map[string]any{"file_path": "../elsewhere/out.txt", "content": "x"}))
	if !res.IsError || res.Error.Code != tools.CodeDenied || !strings.Contains(text(res), "the user rejected tool \"write\"") {
		t.Fatalf("rejected write: %s", text(res))
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Fatal("a rejected write created the file")
	}
	if len(ap.asked) != 1 || ap.asked[0] != "write: changes files outside the workspace: "+target {
		t.Fatalf("asked = %q", ap.asked)
	}
	ap.outcome = tools.AllowedOnce
	if res := m.reg.Run(ctx, pipelineCall("write", live, ws, map[string]any{"file_path": target, "content": "ok"})); res.IsError {
		t.Fatalf("approved write: %s", text(res))
	}
	if got := readFile(t, target); got != "ok" {
		t.Fatalf("content = %q", got)
	}
}

func TestTruncatedBashOutputCanBeReadBackWithoutApproval(t *testing.T) {
	m, err := mount(t, "tools.bash.max_output_bytes=20")
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace(t)
	live := newLive(t, "s1", ws)
	ap := &fakeApprover{outcome: tools.AllowedOnce}
	t.Cleanup(m.reg.SetApprover(ap))
	ctx := context.Background()
	res := m.reg.Run(ctx, pipelineCall("bash", live, ws, map[string]any{"command": "seq 1 50", "description": "count"}))
	if res.IsError || len(ap.asked) != 1 {
		t.Fatalf("bash: %s (asked %q)", text(res), ap.asked)
	}
	path := regexp.MustCompile(`full output: (\S+)\]`).FindStringSubmatch(text(res))
	if path == nil {
		t.Fatalf("no spill file in %q", text(res))
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(path[1])) })
	res = m.reg.Run(ctx, pipelineCall("read", live, ws, map[string]any{"file_path": path[1], "offset": 50}))
	if res.IsError || text(res) != "50: 50\n\n(End of file - total 50 lines)" {
		t.Fatalf("read back: %s", text(res))
	}
	if len(ap.asked) != 1 {
		t.Fatalf("reading the spill file asked for approval: %q", ap.asked)
	}
	// Outside the workspace in general, a read still asks.
	m.reg.Run(ctx, pipelineCall("read", live, ws, map[string]any{"file_path": "/etc/hostname"}))
	if len(ap.asked) != 2 {
		t.Fatalf("asked = %q", ap.asked)
	}
}

func TestPipelineValidatesArgumentsBeforeTheTools(t *testing.T) {
	m, err := mount(t, "permissions.mode=bypass")
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace(t)
	cases := []struct {
		name string
		args string
	}{
		{"read", `{"file_path":"a","offset":"ten"}`},
		{"edit", `{"file_path":"a","old_string":"x"}`},
		{"grep", `{"pattern":"x","output_mode":"lines"}`},
		{"todo_write", `{"todos":[{"content":"x","status":"pending","extra":1}]}`},
	}
	for _, tc := range cases {
		res := m.reg.Run(context.Background(), &tools.Call{CallID: "c", Name: tc.name, Arguments: tc.args, Cwd: ws, Session: newLive(t, "s", ws)})
		if !res.IsError || res.Error.Code != tools.CodeInvalidArgs {
			t.Errorf("%s %s: %s", tc.name, tc.args, text(res))
		}
	}
}

func TestSessionDetachForgetsReadRecords(t *testing.T) {
	m, err := mount(t, "permissions.mode=bypass")
	if err != nil {
		t.Fatal(err)
	}
	ws := workspace(t)
	writeFile(t, filepath.Join(ws, "a.txt"), "a\n")
	live := newLive(t, "s1", ws)
	if err := m.sessions.Attach(live); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	m.reg.Run(ctx, pipelineCall("read", live, ws, map[string]any{"file_path": "a.txt"}))
	m.sessions.Detach(live)
	res := m.reg.Run(ctx, pipelineCall("edit", live, ws, map[string]any{"file_path": "a.txt", "old_string": "a", "new_string": "b"}))
	if !res.IsError || res.Error.Code != CodeNotRead {
		t.Fatalf("edit after detach: %s", text(res))
	}
}
