package permissions

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// jsonSection decodes a JSON object strictly, like the real config does.
type jsonSection string

func (s jsonSection) Decode(out any) error {
	dec := json.NewDecoder(strings.NewReader(string(s)))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

type sections map[string]string

func (m sections) Section(path string) host.Section { return jsonSection(m[path]) }

func startHost(t *testing.T, cfg string) (*host.Host, *tools.Registry, *prompt.Registry, *session.Registry, error) {
	t.Helper()
	h := host.New(nil)
	reg := tools.NewRegistry(nil)
	prompts := prompt.NewRegistry()
	sessions := session.NewRegistry()
	for _, err := range []error{
		provide(h, tools.ServiceKey, reg),
		provide(h, prompt.ServiceKey, prompts),
		provide(h, session.RegistryKey, sessions),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	err := h.Start([]host.Plugin{Plugin()}, sections{"permissions": cfg})
	t.Cleanup(func() { _ = h.Close() })
	return h, reg, prompts, sessions, err
}

func provide[T any](h *host.Host, k host.Key[T], v T) error {
	_, err := host.Provide(h, k, "", v)
	return err
}

func TestPluginProvidesTheServiceAndTheRuntimeContext(t *testing.T) {
	h, reg, prompts, sessions, err := startHost(t, `{"mode":"accept-edits"}`)
	if err != nil {
		t.Fatal(err)
	}
	svc, ok := host.Get(h, ServiceKey)
	if !ok {
		t.Fatal("no permissions service")
	}
	if svc.DefaultMode() != ModeAcceptEdits || reg.PreExecute.Len() != 1 {
		t.Fatalf("mode %s, %d pre-execute middlewares", svc.DefaultMode(), reg.PreExecute.Len())
	}
	text, parts, err := prompts.RuntimeContext(prompt.Scope{SessionID: "s1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || parts[0].Name != ContextName || !strings.HasPrefix(parts[0].Text, "Permission mode: accept-edits.") || !strings.Contains(text, parts[0].Text) {
		t.Fatalf("runtime context = %q", text)
	}
	if err := svc.SetMode("s1", ModeReadOnly); err != nil {
		t.Fatal(err)
	}
	_, parts, _ = prompts.RuntimeContext(prompt.Scope{SessionID: "s1"})
	if !strings.HasPrefix(parts[0].Text, "Permission mode: read-only.") {
		t.Fatalf("after SetMode: %q", parts[0].Text)
	}

	// Detaching the session forgets its override.
	live := session.NewLive(session.Header{ID: "s1"}, nil, session.LiveOptions{})
	if err := sessions.Attach(live); err != nil {
		t.Fatal(err)
	}
	sessions.Detach(live)
	if svc.Mode("s1") != ModeAcceptEdits {
		t.Fatalf("mode after detach = %s", svc.Mode("s1"))
	}

	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if reg.PreExecute.Len() != 0 {
		t.Error("dispose left the middleware installed")
	}
	if _, parts, _ := prompts.RuntimeContext(prompt.Scope{}); len(parts) != 0 {
		t.Error("dispose left the context part")
	}
	if _, ok := host.Get(h, ServiceKey); ok {
		t.Error("dispose left the service")
	}
}

func TestPluginRejectsAnUnknownMode(t *testing.T) {
	_, _, _, _, err := startHost(t, `{"mode":"yolo"}`)
	if err == nil || !strings.Contains(err.Error(), "plugin permissions") || !strings.Contains(err.Error(), `unknown permission mode "yolo"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestHeadlessDenialSaysHowToChangeTheMode(t *testing.T) {
	_, reg, _, _, err := startHost(t, `{"mode":"default"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Register(fakeTool("writer", tools.EffectWrite)); err != nil {
		t.Fatal(err)
	}
	res := reg.Run(context.Background(), &tools.Call{CallID: "c", Name: "writer", Arguments: `{"path":"/w/a"}`, Cwd: "/w"})
	want := `Error: tool "writer" needs the user's approval (permission mode default asks before changing files), but this session has no way to ask; do not retry it. Tell the user, who can allow such calls with a more permissive mode than default (for example --set permissions.mode=accept-edits)`
	if got := resultText(res); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func TestModesAreDescribed(t *testing.T) {
	for _, m := range Modes() {
		if m.Title() == "" || m.Description() == "" || !strings.Contains(m.contextText(), string(m)) {
			t.Errorf("mode %s lacks text", m)
		}
		if got, err := ParseMode(string(m)); err != nil || got != m {
			t.Errorf("ParseMode(%s) = %s, %v", m, got, err)
		}
	}
}
