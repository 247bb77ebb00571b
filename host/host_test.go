package host_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host"
)

var (
	alphaKey = host.NewKey[string]("alpha")
	betaKey  = host.NewKey[int]("beta")
)

// recorder records plugin activations and disposals in order.
type recorder struct{ log []string }

func (r *recorder) plugin(name string, requires, provides []string) host.Plugin {
	return host.Plugin{
		Name: name, Requires: requires, Provides: provides,
		Apply: func(h *host.Host, _ host.Section) (host.Dispose, error) {
			r.log = append(r.log, "apply "+name)
			for _, p := range provides {
				if _, err := host.Provide(h, host.NewKey[string](p), name, name); err != nil {
					return nil, err
				}
			}
			return func() error { r.log = append(r.log, "dispose "+name); return nil }, nil
		},
	}
}

func TestPluginsActivateInDependencyOrderAndDisposeInReverse(t *testing.T) {
	var r recorder
	h := host.New(nil)
	err := h.Start([]host.Plugin{
		r.plugin("consumer", []string{"mid"}, nil),
		r.plugin("middle", []string{"base"}, []string{"mid"}),
		r.plugin("provider", nil, []string{"base"}),
		r.plugin("independent", nil, nil),
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	want := "apply provider,apply middle,apply consumer,apply independent," +
		"dispose independent,dispose consumer,dispose middle,dispose provider"
	if got := strings.Join(r.log, ","); got != want {
		t.Fatalf("order:\n got %s\nwant %s", got, want)
	}
}

func TestMissingServiceNamesPluginAndService(t *testing.T) {
	var r recorder
	h := host.New(nil)
	err := h.Start([]host.Plugin{r.plugin("spill-policy", []string{"tools"}, nil)}, nil)
	if err == nil || !strings.Contains(err.Error(), "plugin spill-policy") || !strings.Contains(err.Error(), `"tools"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestServicesProvidedBeforeStartSatisfyRequirements(t *testing.T) {
	var r recorder
	h := host.New(nil)
	if _, err := host.Provide(h, alphaKey, "", "value"); err != nil {
		t.Fatal(err)
	}
	if err := h.Start([]host.Plugin{r.plugin("user", []string{"alpha"}, nil)}, nil); err != nil {
		t.Fatal(err)
	}
	if v, ok := host.Get(h, alphaKey); !ok || v != "value" {
		t.Fatalf("Get = %q, %v", v, ok)
	}
}

func TestDuplicateServiceIsRejected(t *testing.T) {
	var r recorder
	tests := []struct {
		name     string
		premount bool
		plugins  []host.Plugin
		want     string
	}{
		{"two plugins", false, []host.Plugin{r.plugin("a", nil, []string{"alpha"}), r.plugin("b", nil, []string{"alpha"})}, `duplicate service "alpha": provided by plugins a and b`},
		{"plugin and composition", true, []host.Plugin{r.plugin("a", nil, []string{"alpha"})}, `duplicate service "alpha": plugin a provides a service the composition already mounted`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := host.New(nil)
			if tt.premount {
				if _, err := host.Provide(h, alphaKey, "", "x"); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.Start(tt.plugins, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	h := host.New(nil)
	if _, err := host.Provide(h, alphaKey, "first", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := host.Provide(h, alphaKey, "second", "y"); err == nil || !strings.Contains(err.Error(), "already provided by plugin first") {
		t.Fatalf("second Provide: %v", err)
	}
}

func TestDependencyCycleIsNamed(t *testing.T) {
	var r recorder
	h := host.New(nil)
	err := h.Start([]host.Plugin{
		r.plugin("a", []string{"beta"}, []string{"alpha"}),
		r.plugin("b", []string{"alpha"}, []string{"beta"}),
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "plugin dependency cycle: a -> b -> a") {
		t.Fatalf("err = %v", err)
	}
	if len(r.log) != 0 {
		t.Fatalf("nothing may activate in a cycle, got %v", r.log)
	}
}

func TestFailedApplyDisposesWhatWasActivated(t *testing.T) {
	var r recorder
	h := host.New(nil)
	failing := host.Plugin{Name: "broken", Requires: []string{"base"}, Apply: func(*host.Host, host.Section) (host.Dispose, error) {
		return nil, errors.New("bad config")
	}}
	err := h.Start([]host.Plugin{r.plugin("provider", nil, []string{"base"}), failing}, nil)
	if err == nil || !strings.Contains(err.Error(), "plugin broken: bad config") {
		t.Fatalf("err = %v", err)
	}
	if got := strings.Join(r.log, ","); got != "apply provider,dispose provider" {
		t.Fatalf("log = %s", got)
	}
}

func TestPluginThatDoesNotProvideWhatItDeclaresFails(t *testing.T) {
	h := host.New(nil)
	liar := host.Plugin{Name: "liar", Provides: []string{"beta"}, Apply: func(*host.Host, host.Section) (host.Dispose, error) {
		return nil, nil
	}}
	if err := h.Start([]host.Plugin{liar}, nil); err == nil || !strings.Contains(err.Error(), `plugin liar declares service "beta" but did not provide it`) {
		t.Fatalf("err = %v", err)
	}
}

func TestCloseIsIdempotentAndJoinsDisposeErrors(t *testing.T) {
	h := host.New(nil)
	calls := 0
	h.OnClose("first", func() error { calls++; return errors.New("boom") })
	err1 := h.Close()
	err2 := h.Close()
	if calls != 1 || err1 == nil || !strings.Contains(err1.Error(), "dispose first: boom") || err2 == nil || err2.Error() != err1.Error() {
		t.Fatalf("calls %d err1 %v err2 %v", calls, err1, err2)
	}
}

func TestGetWithWrongTypeIsAbsentAndRemoveUnregisters(t *testing.T) {
	h := host.New(nil)
	remove, err := host.Provide(h, alphaKey, "", "s")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := host.Get(h, host.NewKey[int]("alpha")); ok {
		t.Fatal("a service must not be returned under a different type")
	}
	remove()
	if _, err := host.Require(h, alphaKey); err == nil || !strings.Contains(err.Error(), `service "alpha" is not available`) {
		t.Fatalf("Require after remove: %v", err)
	}
	if _, err := host.Provide(h, betaKey, "", 1); err != nil {
		t.Fatal(err)
	}
}

type sectionSource map[string]map[string]any

type mapSection map[string]any

func (m mapSection) Decode(out any) error {
	p, ok := out.(*map[string]any)
	if !ok {
		return errors.New("unsupported")
	}
	*p = m
	return nil
}

func (s sectionSource) Section(path string) host.Section { return mapSection(s[path]) }

func TestPluginReceivesItsConfigSection(t *testing.T) {
	var got map[string]any
	p := host.Plugin{Name: "spill", Section: "plugins.spill", Apply: func(_ *host.Host, sec host.Section) (host.Dispose, error) {
		return nil, sec.Decode(&got)
	}}
	src := sectionSource{"plugins.spill": {"max_inline_bytes": 800}}
	if err := host.New(nil).Start([]host.Plugin{p}, src); err != nil {
		t.Fatal(err)
	}
	if got["max_inline_bytes"] != 800 {
		t.Fatalf("section = %v", got)
	}
}
