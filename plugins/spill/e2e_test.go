package spill

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestBashOutputOverTheCapIsSpilledAndReadBack drives the real bash and read
// tools through the pipeline with the plugin mounted.
func TestBashOutputOverTheCapIsSpilledAndReadBack(t *testing.T) {
	work, root := t.TempDir(), t.TempDir()
	reg := tools.NewRegistry(nil)
	set, err := codingtools.New(codingtools.DefaultConfig(), codingtools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range set.Definitions() {
		if _, err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	const limit = 2000
	if _, err := startPlugin(t, reg, `{"enabled":true,"max_inline_bytes":2000,"root":`+jsonString(root)+`}`, nil); err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(session.Header{ID: "e2e", Cwd: session.Ptr(work)}, nil, session.LiveOptions{})
	call := func(name string, args any) tools.Result {
		raw, _ := json.Marshal(args)
		return reg.Run(context.Background(), &tools.Call{CallID: name + "-1", Name: name, Arguments: string(raw), Session: live, Cwd: work})
	}

	// 3000 numbered lines (~17 KB): under bash's own tail cap, over ours.
	res := call("bash", map[string]any{"command": "seq -f 'line %g' 1 3000", "description": "print lines"})
	got := session.JoinText(res.Content)
	if res.IsError {
		t.Fatalf("bash failed: %s", got)
	}
	if len(got) > limit {
		t.Fatalf("bash result is %d bytes, over the %d cap", len(got), limit)
	}
	locator := locatorIn(t, got)
	if !strings.HasPrefix(locator, sessionDir(root, "e2e")+string(filepath.Separator)) || !strings.HasSuffix(locator, "-bash.txt") {
		t.Errorf("locator %s", locator)
	}
	full, err := os.ReadFile(locator)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(full), "line 1\nline 2\n") || !strings.HasSuffix(string(full), "line 3000\n[exit code: 0]") {
		t.Errorf("spill file does not hold the whole formatted result: %.40q … %q", full, full[len(full)-30:])
	}
	ref := Ref{Locator: locator, RetrievalHint: RetrievalHint}
	if want, _ := replacement(string(full), ref, limit); got != want {
		t.Errorf("content = %q\nwant %q", got, want)
	}
	// The tail, where errors and the exit code are, survives in the preview.
	if !strings.HasPrefix(got, "line 1\n") || !strings.Contains(got, "line 3000\n[exit code: 0]\n\n(Omitted ") {
		t.Errorf("preview lost its head or tail: %q", got)
	}

	// Reading the spill file back stays inline although it is over the cap.
	back := call("read", map[string]any{"file_path": locator, "offset": 2990, "limit": 20})
	backText := session.JoinText(back.Content)
	if back.IsError || !strings.Contains(backText, "line 3000") || strings.Contains(backText, "(Omitted ") {
		t.Errorf("read of the spill file = %q", backText)
	}
	whole := call("read", map[string]any{"file_path": locator})
	wholeText := session.JoinText(whole.Content)
	if whole.IsError || len(wholeText) <= limit || strings.Contains(wholeText, "Full formatted result stored at") {
		t.Errorf("read result was spilled or failed: %d bytes, error %v", len(wholeText), whole.IsError)
	}
	entries, _ := os.ReadDir(sessionDir(root, "e2e"))
	if len(entries) != 1 {
		t.Errorf("spill directory holds %d files, want only the bash result", len(entries))
	}

	// A small bash result is untouched.
	small := call("bash", map[string]any{"command": "echo hi", "description": "greet"})
	if got := session.JoinText(small.Content); got != "hi\n[exit code: 0]" {
		t.Errorf("small result = %q", got)
	}
}
