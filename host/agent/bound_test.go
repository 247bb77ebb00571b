package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// TestAHugeToolResultIsCutBeforeItIsLogged runs a tool whose result is
// larger than the session log takes in one event (as a grep with a huge
// tools.search.max_results can be): the turn completes, and the logged
// result keeps its head within the bound and says what was cut.
func TestAHugeToolResultIsCutBeforeItIsLogged(t *testing.T) {
	line := strings.Repeat("x", 99) + "\n"
	huge := strings.Repeat(line, (17<<20)/len(line))
	reg := tools.NewRegistry(nil)
	if _, err := reg.Register(&tools.Definition{
		Name: "grep", Description: "search", Parameters: tools.Object(), Output: tools.StringOutput,
		Effect: tools.EffectRead, Execute: func(context.Context, *tools.Call) (any, error) { return huge, nil },
	}); err != nil {
		t.Fatal(err)
	}
	st := store.New(t.TempDir(), store.Options{})
	hdr := session.Header{ID: "sess-huge", CreatedAt: epoch.UnixMilli(), Cwd: session.Ptr(t.TempDir())}
	w, err := st.Create(hdr, nil)
	if err != nil {
		t.Fatal(err)
	}
	live := session.NewLive(hdr, nil, session.LiveOptions{Sink: w, Now: func() time.Time { return epoch }})
	p := newFakeProvider(t, toolReply(call("c1", "grep", `{}`)), textReply("done"))
	h := newHarness(t, p, withTools(reg), withOptions(func(o *Options) { o.Live = live }))
	h.live = live
	h.prompt("search everything")

	if r := lastTurnEnd(t, h.events()); r.Kind != session.EndCompleted {
		t.Fatalf("turn ended %+v, want completed", r)
	}
	results := ofType(h.events(), session.TypeToolResult)
	if len(results) != 1 {
		t.Fatalf("%d tool results, want 1", len(results))
	}
	msg := decode[session.ToolResult](t, results[0]).Message
	text := session.JoinText(msg.Content[0].Content)
	if len(text) > DefaultMaxResultBytes+400 {
		t.Errorf("logged result holds %d bytes, want at most about %d", len(text), DefaultMaxResultBytes)
	}
	if !strings.HasPrefix(text, line) || !strings.Contains(text, "[tool result cut: only its first ") ||
		!strings.Contains(text, " bytes are shown") || !strings.Contains(text, "narrow the call") {
		t.Errorf("logged result does not keep the head and say it was cut: …%s", text[max(0, len(text)-300):])
	}
	// The model saw the same bounded result the log holds.
	last := p.requests()[1].Messages
	got := last[len(last)-1].Content[0].Content
	if session.JoinText(got) != text {
		t.Errorf("the model was sent a different result than the one logged")
	}
	if err := h.agent.Close(); err != nil {
		t.Fatal(err)
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.Inspect(context.Background(), hdr.ID); err != nil {
		t.Fatalf("the log does not read back: %v", err)
	}
}

func TestBoundContentKeepsWholeLinesAndCharacters(t *testing.T) {
	for _, tt := range []struct {
		name  string
		in    []session.ContentBlock
		limit int
		want  string
	}{
		{"fits", []session.ContentBlock{session.TextBlock("abc")}, 3, "abc"},
		{"line end", []session.ContentBlock{session.TextBlock("aaaa\nbbbb\ncc")}, 11, "aaaa\nbbbb\n"},
		{"no near line end", []session.ContentBlock{session.TextBlock("a\nbbbbbbbbbbbb")}, 8, "a\nbbbbbb"},
		{"character", []session.ContentBlock{session.TextBlock("ééé")}, 5, "éé"},
		{"second block", []session.ContentBlock{session.TextBlock("aaa"), session.TextBlock("bbbbbb")}, 5, "aaabb"},
		{"raw block dropped", []session.ContentBlock{session.TextBlock("aa"), {Type: "image", Raw: []byte(`{"type":"image","data":"xxxxxxxx"}`)}}, 10, "aa"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, cut := boundContent(tt.in, tt.limit)
			if want := tt.name != "fits"; cut != want {
				t.Fatalf("cut = %v, want %v", cut, want)
			}
			if !cut {
				return
			}
			note := out[len(out)-1].Text
			if got := session.JoinText(out[:len(out)-1]); got != tt.want {
				t.Errorf("kept %q, want %q", got, tt.want)
			}
			if !strings.HasPrefix(note, "[tool result cut: only its first ") {
				t.Errorf("last block is not the note: %q", note)
			}
		})
	}
}
