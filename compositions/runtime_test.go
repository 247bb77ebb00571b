package compositions

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/agent"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// loadConfig loads the layered config for a hermetic home, with extra
// --set style overrides.
func loadConfig(t *testing.T, profile string, set ...string) (*config.Config, string) {
	t.Helper()
	root := t.TempDir()
	home, cwd := filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := config.Load(config.Options{
		Profile: profile, Home: home, Cwd: cwd, Set: set,
		Env:      func(string) (string, bool) { return "", false },
		Sections: ConfigSections(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, cwd
}

func newRuntime(t *testing.T, kind Kind, cfg *config.Config) *Runtime {
	t.Helper()
	rt, err := New(t.Context(), Options{Config: cfg, Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// promptAndWait sends text to a and waits until the turn is over.
func promptAndWait(t *testing.T, rt *Runtime, a *agent.Agent, text string) {
	t.Helper()
	a.Followup(agent.UserText(text, rt.NewID()))
	if err := a.WhenIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func toolNames(rt *Runtime) string {
	var names []string
	for _, s := range rt.Tools.Schemas() {
		names = append(names, s.Name)
	}
	return strings.Join(names, ",")
}

func TestCompositionsMountTheQueryServiceExceptHeadless(t *testing.T) {
	for _, kind := range []Kind{ACP, TUI, Headless} {
		t.Run(string(kind), func(t *testing.T) {
			cfg, _ := loadConfig(t, "")
			rt := newRuntime(t, kind, cfg)
			_, mounted := host.Get(rt.Host, sessionquery.ServiceKey)
			if mounted != (kind != Headless) || (rt.Query != nil) != mounted {
				t.Fatalf("session-query mounted = %v for %s", mounted, kind)
			}
			if got := toolNames(rt); got != "bash,edit,glob,grep,read,todo_write,write" {
				t.Fatalf("default roster = %s", got)
			}
		})
	}
}

func TestNewSessionPersistsAndResumeContinuesTheLog(t *testing.T) {
	srv := fakellm.New(fakellm.Reply{Text: "first answer"}, fakellm.Reply{Text: "second answer"})
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
	rt := newRuntime(t, TUI, cfg)

	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	id := a.ID()
	promptAndWait(t, rt, a, "hello")
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	if _, live := rt.Sessions.Get(id); live {
		t.Fatal("a closed session stays live")
	}

	b, err := rt.ResumeSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, b, "again")
	_, events := b.Session().Snapshot()
	var reasons, answers []string
	for _, e := range events {
		switch e.Type {
		case session.TypeRequestHeader:
			var rh session.RequestHeader
			_ = e.DecodeData(&rh)
			reasons = append(reasons, rh.Reason)
		case session.TypeAssistantMessage:
			var m session.AssistantMessage
			_ = e.DecodeData(&m)
			answers = append(answers, session.JoinText(m.Message.Content))
		}
	}
	if strings.Join(reasons, ",") != "initial,resume" || strings.Join(answers, ",") != "first answer,second answer" {
		t.Fatalf("reasons %v answers %v", reasons, answers)
	}
	if _, err := rt.ResumeSession(t.Context(), id); err != nil {
		t.Fatalf("resuming a session the runtime already drives: %v", err)
	}
}

func TestForkSeedsAChildInTheSameWorkspace(t *testing.T) {
	srv := fakellm.New(fakellm.Reply{Text: "answer"})
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, a, "hello")
	child, err := rt.ForkSession(t.Context(), a.ID(), session.ForkLatest)
	if err != nil {
		t.Fatal(err)
	}
	h, events := child.Session().Snapshot()
	if h.ParentSession == nil || *h.ParentSession != a.ID() || h.CwdOrEmpty() != cwd || h.SeedLength == nil {
		t.Fatalf("child header %+v", h)
	}
	if last := events[len(events)-1]; last.Type != session.TypeEndSeed || last.Seq != *h.SeedLength {
		t.Fatalf("first live write is %s at %d", last.Type, last.Seq)
	}
}

func TestSnapshotDeterminismKnobs(t *testing.T) {
	cfg, cwd := loadConfig(t, "", "runtime.clock=fixed", "runtime.fixed_time_ms=1700000000000", "runtime.ids=sequential")
	rt := newRuntime(t, Headless, cfg)
	a, err := rt.NewSession(context.Background(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	h := a.Session().Header()
	if h.ID != "00000000-0000-4000-8000-000000000001" || h.CreatedAt != 1700000000000 {
		t.Fatalf("header %+v", h)
	}
}

func TestRelativeWorkspaceIsRefused(t *testing.T) {
	cfg, _ := loadConfig(t, "")
	rt := newRuntime(t, Headless, cfg)
	if _, err := rt.NewSession(t.Context(), "relative/dir"); err == nil || !strings.Contains(err.Error(), "absolute") {
		t.Fatalf("err = %v", err)
	}
}

func TestRuntimeContextNamesWorkspaceDateAndMode(t *testing.T) {
	srv := fakellm.New(fakellm.Reply{Text: "ok"})
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k",
		"runtime.clock=fixed", "runtime.fixed_time_ms=1700000000000", "permissions.mode=accept-edits")
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, a, "hi")
	req := string(srv.Requests()[0])
	for _, want := range []string{"Working directory: " + cwd + ". Today's date: 2023-11-14.", "accept-edits"} {
		if !strings.Contains(req, want) {
			t.Fatalf("request lacks %q:\n%s", want, req)
		}
	}
	if strings.Contains(req[:strings.Index(req, `"role":"user"`)], "2023-11-14") {
		t.Fatal("the date must not be in the system prompt")
	}
}

func TestSessionQueryProfileAddsTheFiveToolsInEveryComposition(t *testing.T) {
	const five = "session_event_read,session_event_search,session_event_trace,session_search,session_trace"
	for _, kind := range []Kind{ACP, TUI, Headless} {
		t.Run(string(kind), func(t *testing.T) {
			cfg, _ := loadConfig(t, "session-query")
			rt := newRuntime(t, kind, cfg)
			got := toolNames(rt)
			if !strings.Contains(got, five) {
				t.Fatalf("%s roster = %s", kind, got)
			}
		})
	}
}

func TestFullTextSearchFindsAPriorSessionAndOpenAtNeverDisablesIt(t *testing.T) {
	srv := fakellm.New(fakellm.Reply{Text: "the quokka answer"})
	defer srv.Close()
	cfg, cwd := loadConfig(t, "", "llm.base_url="+srv.URL, "llm.api_key=k")
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	promptAndWait(t, rt, a, "tell me about quokkas")
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	page, err := rt.Query.SearchSessions(t.Context(), sessionquery.SessionSearchRequest{Query: "quokka answer"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != 1 || page.Items[0].Header.ID != a.ID() || !page.Items[0].Persisted {
		t.Fatalf("hits = %+v", page.Items)
	}
	if _, err := os.Stat(filepath.Join(cfg.Home, "session-query.db")); err != nil {
		t.Fatalf("index file: %v", err)
	}

	cfg2, _ := loadConfig(t, "", "session_query.open_at=never")
	rt2 := newRuntime(t, ACP, cfg2)
	_, err = rt2.Query.SearchSessions(t.Context(), sessionquery.SessionSearchRequest{Query: "x"})
	var qe *sessionquery.Error
	if !errors.As(err, &qe) || qe.Code != sessionquery.CodeSearchDisabled {
		t.Fatalf("open_at never: %v", err)
	}
}

func TestAnUnusedSessionLeavesNoLog(t *testing.T) {
	cfg, cwd := loadConfig(t, "")
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	if entries, err := rt.Store.List(t.Context()); err != nil || len(entries) != 0 {
		t.Fatalf("listing after closing an unused session: %d entries, %v", len(entries), err)
	}
}

// A session's recorded settings come back when it is resumed, the mode
// included (TUI /resume, dsh run --resume and the ACP front end all
// resume through the runtime); a fork keeps them too.
func TestResumeRestoresTheRecordedModeAndModel(t *testing.T) {
	cfg, cwd := loadConfig(t, "")
	rt := newRuntime(t, TUI, cfg)
	a, err := rt.NewSession(t.Context(), cwd)
	if err != nil {
		t.Fatal(err)
	}
	id := a.ID()
	if err := rt.Permissions.SetMode(id, permissions.ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	// Both changes are recorded as they happen, whichever front end
	// makes them.
	a.SetModel("deepseek-v4-pro", "")
	if err := rt.CloseSession(a); err != nil {
		t.Fatal(err)
	}
	if m := rt.Permissions.Mode(id); m != permissions.ModeDefault {
		t.Fatalf("closing kept mode %s", m)
	}
	b, err := rt.ResumeSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if m := rt.Permissions.Mode(id); m != permissions.ModeAcceptEdits {
		t.Errorf("resumed mode = %s", m)
	}
	if m, _ := b.Model(); m != "deepseek-v4-pro" {
		t.Errorf("resumed model = %s", m)
	}
	f, err := rt.ForkSession(t.Context(), id, session.ForkLatest)
	if err != nil {
		t.Fatal(err)
	}
	if m := rt.Permissions.Mode(f.ID()); m != permissions.ModeAcceptEdits {
		t.Errorf("fork mode = %s", m)
	}
}
