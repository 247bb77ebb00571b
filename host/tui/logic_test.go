package tui

import (
	"slices"
	"strings"
	"testing"

	"github.com/rivo/uniseg"
)

// Unit tests of the UI's pieces with logic, without a screen.

func TestCommandNamesResolveByExactNameOrUniquePrefix(t *testing.T) {
	names := func(cs []command) string {
		var out []string
		for _, c := range cs {
			out = append(out, c.name)
		}
		return strings.Join(out, " ")
	}
	for prefix, want := range map[string]string{
		"":      "help new resume search fork compact retry model mode title status mcp exit",
		"re":    "resume retry",
		"ret":   "retry",
		"m":     "model mode mcp",
		"mod":   "model mode",
		"x":     "",
		"HELP":  "", // names are lower case; so is what the UI matches
		"exit":  "exit",
		"exitx": "",
	} {
		if got := names(commandsMatching(prefix)); got != want {
			t.Errorf("commandsMatching(%q) = %q, want %q", prefix, got, want)
		}
	}
}

func TestThePickerFilterNeedsEveryWordInAnyCase(t *testing.T) {
	b := newBackend(t, newScripted())
	u := newUI(Options{Sessions: b, Tools: b.tools, Cwd: b.cwd}.mustDefaults(t))
	t.Cleanup(u.cancel)
	p := newPicker(u, func() []span { return nil }, "")
	p.setItems([]pickItem{
		{key: "Fix the flaky cache test  2h ago"},
		{key: "Rename parseConfig  fork of 0a1b2c3d"},
		{key: "cache warm-up script"},
	})
	for filter, want := range map[string][]int{
		"":             {0, 1, 2},
		"cache":        {0, 2},
		"CACHE test":   {0},
		"  fork   of ": {1},
		"nothing":      nil,
	} {
		p.filter.SetText(filter)
		if got := p.shown; len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
			t.Errorf("filter %q shows %v, want %v", filter, got, want)
		}
	}
}

func (o Options) mustDefaults(t *testing.T) Options {
	t.Helper()
	o, err := o.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestParseCommandSplitsTheNameFromItsArgument(t *testing.T) {
	for _, tc := range []struct {
		line, want, name, arg string
	}{
		{"/help", "help", "help", ""},
		{"/model  deepseek-v4-pro high ", "model", "model", "deepseek-v4-pro high"},
		{"/title   fix the flaky upload test  ", "title", "title", "fix the flaky upload test"},
		{"/mode read-only", "mode", "mode", "read-only"}, // exact, though a prefix of model
		{"/ret", "retry", "ret", ""},
		{"/se walrus", "search", "se", "walrus"},
		{"/quit", "exit", "exit", ""},
		{"/re", "", "re", ""},          // resume or retry
		{"/mo plan", "", "mo", "plan"}, // model or mode
		{"/", "", "", ""},
		{"/HELP", "", "HELP", ""},
		{"/exitx now", "", "exitx", "now"},
	} {
		found, name, arg := parseCommand(tc.line)
		got := ""
		if found != nil {
			got = found.name
		}
		if got != tc.want || name != tc.name || arg != tc.arg {
			t.Errorf("parseCommand(%q) = %q, %q, %q; want %q, %q, %q", tc.line, got, name, arg, tc.want, tc.name, tc.arg)
		}
	}
}

// TestStatusLineLayoutAt80And50Columns pins what the status bar's right
// side keeps as the terminal narrows: the cache rate goes first, then the
// token counts, then the context use; the model and the permission mode
// always stay.
func TestStatusLineLayoutAt80And50Columns(t *testing.T) {
	facts := []statusFact{
		{"↑12.3k ↓456", 1},
		{"cache 80%", 0},
		{"ctx 12% of 1M", 2},
		{"deepseek-v4-pro high", keepAlways},
		{"accept-edits", keepAlways + 1},
	}
	running := uniseg.StringWidth(" ● responding 12s · step 3") // 26 cells
	ready := uniseg.StringWidth(" ○ ready")                     // 8 cells
	for _, tc := range []struct {
		name         string
		leftW, width int
		want         string
	}{
		{"wide", running, 120, "↑12.3k ↓456 · cache 80% · ctx 12% of 1M · deepseek-v4-pro high · accept-edits"},
		{"80 columns, running", running, 80, "ctx 12% of 1M · deepseek-v4-pro high · accept-edits"},
		{"one column short of the context use", running, 78, "deepseek-v4-pro high · accept-edits"},
		{"80 columns, ready", ready, 80, "↑12.3k ↓456 · ctx 12% of 1M · deepseek-v4-pro high · accept-edits"},
		{"50 columns, ready", ready, 50, "deepseek-v4-pro high · accept-edits"},
		{"50 columns, running: the model and mode stay though they overflow", running, 50, "deepseek-v4-pro high · accept-edits"},
	} {
		if got := strings.Join(fitStatus(facts, tc.leftW, tc.width), " · "); got != tc.want {
			t.Errorf("%s: right side %q, want %q", tc.name, got, tc.want)
		}
	}
}
