package timeout

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// bareHost is a host with a tool registry whose plugins start later, so a
// test can register wrappers before the policy.
type bareHost struct {
	h   *host.Host
	reg *tools.Registry
}

func newBareHost(t *testing.T) *bareHost {
	t.Helper()
	b := &bareHost{h: host.New(nil), reg: tools.NewRegistry(nil)}
	if _, err := host.Provide(b.h, tools.ServiceKey, "", b.reg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.h.Close() })
	return b
}

func (b *bareHost) start(t *testing.T) {
	t.Helper()
	if err := b.h.Start([]host.Plugin{Plugin()}, nil); err != nil {
		t.Fatal(err)
	}
}

func TestPluginRegistersOneExecuteWrapperAndDisposeRemovesIt(t *testing.T) {
	b := newBareHost(t)
	b.start(t)
	if b.reg.Execute.Len() != 1 || b.reg.PreExecute.Len() != 0 || b.reg.PostExecute.Len() != 0 {
		t.Fatalf("chains: execute %d, pre %d, post %d", b.reg.Execute.Len(), b.reg.PreExecute.Len(), b.reg.PostExecute.Len())
	}
	if err := b.h.Close(); err != nil {
		t.Fatal(err)
	}
	if b.reg.Execute.Len() != 0 {
		t.Fatal("dispose left the wrapper registered")
	}
}

func TestPluginStartFailures(t *testing.T) {
	cases := []struct {
		name     string
		provide  bool
		wantText string
	}{
		{"missing tools service", false, `plugin timeout-policy requires service "tools"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := host.New(nil)
			t.Cleanup(func() { _ = h.Close() })
			if tc.provide {
				if _, err := host.Provide(h, tools.ServiceKey, "", tools.NewRegistry(nil)); err != nil {
					t.Fatal(err)
				}
			}
			err := h.Start([]host.Plugin{Plugin()}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.wantText) {
				t.Fatalf("Start error = %v, want it to contain %q", err, tc.wantText)
			}
		})
	}
}

func TestTimeoutReasonIsADeadlineWithAReadableMessage(t *testing.T) {
	cases := []struct {
		budget time.Duration
		want   string
	}{
		{30 * time.Second, "TOOL_TIMEOUT after 30000ms"},
		{1500 * time.Microsecond, "TOOL_TIMEOUT after 1.5ms"},
		{time.Millisecond, "TOOL_TIMEOUT after 1ms"},
	}
	for _, tc := range cases {
		r := &TimeoutReason{Code: Code, Timeout: tc.budget}
		if r.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", r.Error(), tc.want)
		}
		if !errors.Is(r, context.DeadlineExceeded) || errors.Is(r, context.Canceled) {
			t.Errorf("%v: errors.Is(DeadlineExceeded) must hold and Canceled must not", r)
		}
	}
}

func TestTimeoutOfReadsOnlyToolTimeoutCauses(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	other, cancelOther := context.WithCancelCause(context.Background())
	cancelOther(&TimeoutReason{Code: "OTHER", Timeout: time.Second})
	ours, cancelOurs := context.WithCancelCause(context.Background())
	cancelOurs(&TimeoutReason{Code: Code, Timeout: 2 * time.Second})
	child, stop := context.WithCancel(ours)
	defer stop()

	cases := []struct {
		name string
		ctx  context.Context
		want bool
	}{
		{"live context", context.Background(), false},
		{"plain cancellation", cancelled, false},
		{"another code", other, false},
		{"tool timeout", ours, true},
		{"child of a timed-out context", child, true},
	}
	for _, tc := range cases {
		r, ok := TimeoutOf(tc.ctx)
		if ok != tc.want {
			t.Errorf("%s: TimeoutOf ok = %v, want %v", tc.name, ok, tc.want)
		}
		if ok && r.Timeout != 2*time.Second {
			t.Errorf("%s: reason %+v", tc.name, r)
		}
	}
}

func TestPluginStartsFromTheRealSessionQueryProfile(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Load(config.Options{
		Profile:  "session-query",
		Home:     dir,
		Cwd:      dir,
		Env:      func(string) (string, bool) { return "", false },
		Sections: []config.Schema{ConfigSchema},
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Value("plugins.timeout.enabled") != true {
		t.Fatal("the session-query profile does not enable plugins.timeout")
	}
	b := newBareHost(t)
	if err := b.h.Start([]host.Plugin{Plugin()}, cfg); err != nil {
		t.Fatal(err)
	}
	if b.reg.Execute.Len() != 1 {
		t.Fatalf("%d execute wrappers", b.reg.Execute.Len())
	}
}

func TestConfigKnowsOnlyTheSwitch(t *testing.T) {
	dir := t.TempDir()
	_, err := config.Load(config.Options{Home: dir, Cwd: dir, Env: func(string) (string, bool) { return "", false },
		Set: []string{"plugins.timeout.default_ms=5"}, Sections: []config.Schema{ConfigSchema}})
	if err == nil || !strings.Contains(err.Error(), `unknown config key "plugins.timeout.default_ms"`) {
		t.Fatalf("err = %v, want the unknown key named", err)
	}
}
