package tui

import (
	"slices"
	"strings"
	"testing"
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
