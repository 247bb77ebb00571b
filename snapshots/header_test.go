package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/seed-e9b4dba4/dsh/host/session"
	sqplugin "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
)

// pins names the scenario whose first request pins each header class.
var pins = []struct{ class, scenario string }{
	{"default", "text-turn"},
	{"session-query", "session-query-spill"},
}

// header is one request/header, normalized: the system prompt as the
// golden .md holds it and the tool schemas as pretty JSON.
type header struct {
	system string
	tools  []byte
	reason string // initial, resume or change
}

// schemaSidecar is the tool-schemas golden in the upstream fixture shape
// (tool-schemas.expected.json): the first header's tools, then the tools of
// every later header written because the request changed.
type schemaSidecar struct {
	Initial json.RawMessage   `json:"initial"`
	Changes []json.RawMessage `json:"changes"`
}

// sidecar renders hs as the golden holds it, 2-space indented with a
// trailing newline.
func sidecar(t *testing.T, hs []header) []byte {
	t.Helper()
	s := schemaSidecar{Initial: hs[0].tools, Changes: []json.RawMessage{}}
	for _, h := range hs[1:] {
		if h.reason == "change" {
			s.Changes = append(s.Changes, h.tools)
		}
	}
	out, err := session.MarshalIndent(s)
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}

// requestHeaders returns every request/header of a raw log, normalized.
func requestHeaders(t *testing.T, n *normalizer, raw []byte) []header {
	t.Helper()
	var out []header
	for i, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		if i == 0 || !bytes.Contains(line, []byte(`"type":"request/header"`)) {
			continue
		}
		var e session.Event
		if err := json.Unmarshal(line, &e); err != nil || e.Type != session.TypeRequestHeader {
			continue
		}
		var d session.RequestHeader
		if err := e.DecodeData(&d); err != nil {
			t.Fatal(err)
		}
		tools := d.Header.Tools
		if tools == nil {
			tools = []json.RawMessage{}
		}
		compact, err := session.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		pretty, err := session.Indent(compact)
		if err != nil {
			t.Fatal(err)
		}
		tn, err := parse([]byte(pretty))
		if err != nil {
			t.Fatal(err)
		}
		tn.strings(n.string)
		pretty, err = session.Indent(tn.compact())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, header{system: n.string(d.Header.System) + "\n", tools: []byte(pretty + "\n"), reason: d.Reason})
	}
	return out
}

// TestRequestHeaderGoldens pins the system prompt and tool schemas of the
// first model request of a real ACP prompt, per class, read back from the
// persisted log, both in-process and through the built binary.
func TestRequestHeaderGoldens(t *testing.T) {
	scenarios := loadScenarios(t)
	for _, pin := range pins {
		i := slices.IndexFunc(scenarios, func(s *scenario) bool { return s.Name == pin.scenario })
		if i < 0 {
			t.Fatalf("class %s: pin scenario %s is missing", pin.class, pin.scenario)
		}
		sc := scenarios[i]
		if sc.Input.Class != pin.class {
			t.Fatalf("pin scenario %s is of class %s, not %s", sc.Name, sc.Input.Class, pin.class)
		}
		for _, mode := range modes {
			t.Run(pin.class+"/"+mode.name, func(t *testing.T) {
				e := newEnv(t, sc)
				res := mode.run(t, sc, e)
				if len(res.logs) == 0 {
					t.Fatalf("no session log; stderr:\n%s", res.stderr)
				}
				hs := requestHeaders(t, newNormalizer(e), res.logs[0])
				if len(hs) == 0 {
					t.Fatalf("the pin scenario logged no request/header; stderr:\n%s", res.stderr)
				}
				g := goldie.New(t, goldie.WithFixtureDir(filepath.Join("testdata", pin.class)), goldie.WithNameSuffix(""))
				g.Assert(t, "system-prompt.golden.md", []byte(hs[0].system))
				g.Assert(t, "tool-schemas.golden.json", sidecar(t, hs))
			})
		}
	}
}

// goldenHeader reads a class's pinned header.
func goldenHeader(t *testing.T, class string) header {
	t.Helper()
	sys, err := os.ReadFile(filepath.Join("testdata", class, "system-prompt.golden.md"))
	if err != nil {
		t.Fatalf("class %s has no golden system prompt: %v", class, err)
	}
	raw, err := os.ReadFile(filepath.Join("testdata", class, "tool-schemas.golden.json"))
	if err != nil {
		t.Fatalf("class %s has no golden tool schemas: %v", class, err)
	}
	var s schemaSidecar
	if err := json.Unmarshal(raw, &s); err != nil || s.Initial == nil || s.Changes == nil {
		t.Fatalf("class %s: tool-schemas.golden.json is not {\"initial\":[…],\"changes\":[…]}: %v", class, err)
	}
	tools, err := session.Indent(s.Initial)
	if err != nil {
		t.Fatal(err)
	}
	return header{system: string(sys), tools: []byte(tools + "\n"), reason: "initial"}
}

type schema struct {
	Name string `json:"name"`
}

func toolNames(t *testing.T, pretty []byte) []string {
	t.Helper()
	var ss []schema
	if err := json.Unmarshal(pretty, &ss); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// The opt-in class adds exactly the five session tools and the
// tool:session-query section; everything else equals the default class.
func TestSessionQueryHeaderIsDefaultPlusFiveToolsAndOneSection(t *testing.T) {
	def, opt := goldenHeader(t, "default"), goldenHeader(t, "session-query")
	five := []string{"session_event_read", "session_event_search", "session_event_trace", "session_search", "session_trace"}

	defNames := toolNames(t, def.tools)
	for _, n := range defNames {
		if strings.HasPrefix(n, "session_") {
			t.Errorf("the default class offers %s", n)
		}
	}
	if strings.Contains(def.system, sqplugin.PromptText) {
		t.Error("the default system prompt has the tool:session-query section")
	}

	optNames := toolNames(t, opt.tools)
	var extra []string
	for _, n := range optNames {
		if !slices.Contains(defNames, n) {
			extra = append(extra, n)
		}
	}
	if !slices.Equal(extra, five) {
		t.Errorf("the opt-in class adds %v, want exactly %v", extra, five)
	}
	if !slices.IsSorted(optNames) || !slices.IsSorted(defNames) {
		t.Errorf("tools are not in lexicographic order: %v / %v", defNames, optNames)
	}
	// The shared tools are byte-identical.
	var defSchemas, optSchemas []json.RawMessage
	_ = json.Unmarshal(def.tools, &defSchemas)
	_ = json.Unmarshal(opt.tools, &optSchemas)
	var kept []json.RawMessage
	for i, n := range optNames {
		if !slices.Contains(five, n) {
			kept = append(kept, optSchemas[i])
		}
	}
	if fmt.Sprint(compactAll(kept)) != fmt.Sprint(compactAll(defSchemas)) {
		t.Error("the opt-in class changes the schemas of the default tools")
	}

	if n := strings.Count(opt.system, sqplugin.PromptText); n != 1 {
		t.Fatalf("the opt-in system prompt has the section %d times", n)
	}
	// Sections are joined by a blank line; the section may be the last one.
	without := strings.Replace(opt.system, "\n\n"+sqplugin.PromptText, "", 1)
	if without == opt.system {
		without = strings.Replace(opt.system, sqplugin.PromptText+"\n\n", "", 1)
	}
	if without != def.system {
		t.Errorf("removing the section from the opt-in prompt does not give the default prompt:\n%s", firstDiff([]byte(without), []byte(def.system)))
	}
}

func compactAll(rs []json.RawMessage) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		var b bytes.Buffer
		_ = json.Compact(&b, r)
		out[i] = b.String()
	}
	return out
}
