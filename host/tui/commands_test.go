package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func TestTitleCommandRenamesTheSession(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, nil)
	d.submit("/title Fix the \x1b[31mflaky upload test")
	d.waitText("dsh Fix the [31mflaky upload test")
	_, events := d.ui.cur.agent.Session().Snapshot()
	title, err := session.FoldTitle(events)
	if err != nil || title == nil || title.Title != "Fix the [31mflaky upload test" || string(title.Source) != `{"kind":"user"}` {
		t.Fatalf("title = %+v, %v", title, err)
	}
	d.submit("/title   ")
	d.waitText("give the new title")
}

func TestModeCommandSwitchesThePermissionMode(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, nil)
	d.submit("/mode read-only")
	d.waitText("permission mode: read-only", "read-only")
	if got := b.perms.Mode(d.ui.cur.agent.ID()); got != "read-only" {
		t.Errorf("mode = %s", got)
	}
	d.submit("/mode")
	d.waitText("Permission mode", "now read-only", "Every tool call runs without asking.")
	d.typeText("bypass")
	d.key(tcell.KeyEnter)
	d.waitText("permission mode: bypass")
	if got := b.perms.Mode(d.ui.cur.agent.ID()); got != "bypass" {
		t.Errorf("mode = %s", got)
	}
	d.submit("/mode yolo")
	d.waitText(`unknown permission mode "yolo"`)
}

func TestModelCommandPicksFromTheCatalog(t *testing.T) {
	b := newBackend(t, newScripted())
	d := startUI(t, b, nil)
	d.submit("/model")
	d.waitText("Model", "● test-model", "big-model", "1.0M context")
	d.key(tcell.KeyDown)
	d.key(tcell.KeyEnter)
	d.waitText("model: big-model (from the next request)")
	if m, _ := d.ui.cur.agent.Model(); m != "big-model" {
		t.Errorf("model = %s", m)
	}
	d.submit("/model")
	d.waitText("reasoning effort default", "● big-model")
	d.key(tcell.KeyUp)
	d.keyMod(tcell.KeyBacktab, 0, tcell.ModShift)
	d.waitText("reasoning effort low")
	d.key(tcell.KeyEnter)
	d.waitText("model: test-model · effort low")
	d.submit("/model test-model high")
	d.waitText("model: test-model · effort high")
	if m, e := d.ui.cur.agent.Model(); m != "test-model" || e != "high" {
		t.Errorf("model = %s %s", m, e)
	}
	d.submit("/model test-model turbo")
	d.waitText(`has no reasoning effort "turbo"`)
	d.submit("/model other-model")
	d.waitText("not in the provider's catalog")
}

func TestUnknownCommandsAndPrefixes(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "literal received")))
	d := startUI(t, b, nil)
	d.submit("/bogus")
	d.waitText("unknown command /bogus")
	d.submit("/he")
	d.waitText("Help")
	d.key(tcell.KeyEscape)
	d.waitGone("Help ·")
	d.submit("//etc/hosts is a path")
	d.waitText("› /etc/hosts is a path", "literal received")
}

func TestTabCompletesCommandsAndUpRecallsHistory(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "one"), textReply("", "two")))
	d := startUI(t, b, nil)
	d.typeText("/sta")
	d.waitText("/status")
	d.key(tcell.KeyTab)
	d.key(tcell.KeyEnter)
	d.waitText("session 0000")

	d.submit("first prompt")
	d.waitText("one")
	d.key(tcell.KeyUp)
	d.key(tcell.KeyUp)
	screen := d.waitFor("the older prompt recalled", func(s string) bool {
		return strings.Contains(row(s, -3), "first prompt") || strings.Contains(row(s, -2), "first prompt")
	})
	_ = screen
	d.key(tcell.KeyDown)
	d.key(tcell.KeyDown)
	d.waitFor("the draft restored", func(s string) bool { return strings.Contains(s, "Message dsh") })
}

func TestForkAndNewSwitchSessions(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "original answer")))
	d := startUI(t, b, nil)
	first := d.ui.cur.agent.ID()
	d.submit("the original prompt")
	d.waitText("original answer", "○ ready")
	d.submit("/fork")
	d.waitText("forked from session "+shortID(first), "› the original prompt")
	forked := d.ui.cur.agent.ID()
	if forked == first {
		t.Fatal("fork did not switch sessions")
	}
	d.submit("/new")
	d.waitText("Type a message and press Enter")
	if d.ui.cur.agent.ID() == forked {
		t.Fatal("/new did not switch sessions")
	}
	for _, want := range []string{first, forked} {
		select {
		case id := <-b.closed:
			if id != want {
				t.Errorf("closed %s, want %s", id, want)
			}
		case <-time.After(waitLimit):
			t.Fatalf("session %s was not closed after switching away", want)
		}
	}
}

func TestCompactCommandReportsWhenThereIsNothingToCompact(t *testing.T) {
	b := newBackend(t, newScripted(textReply("", "short")))
	d := startUI(t, b, nil)
	d.submit("/compact")
	d.waitText("nothing to compact yet")
}

func TestAMissingKeyIsReportedAtTheFirstPrompt(t *testing.T) {
	b := newBackend(t, newScripted(scripted{chunks: []llm.Chunk{{Type: llm.ChunkFinish, Kind: llm.FinishError,
		Failure: &session.Failure{Message: "no API key: DEEPSEEK_API_KEY is not set", Code: llm.CodeMissingCredential}}}}))
	d := startUI(t, b, nil)
	d.submit("hello")
	d.waitText("no API key: DEEPSEEK_API_KEY is not set (MISSING_CREDENTIAL)", "Set the API key")
}

func TestCompactSummarizesOlderTurnsAndMarksTheCheckpoint(t *testing.T) {
	long := strings.Repeat("detail ", 300)
	b := newBackend(t, newScripted(
		textReply("", "first answer "+long),
		textReply("", "second answer "+long),
		textReply("", "third answer"),
		textReply("", "## Goals\n- summarized"),
	))
	d := startUI(t, b, nil)
	for _, p := range []string{"first question", "second question", "third question"} {
		d.submit(p)
		d.waitText("○ ready", "› "+p)
	}
	d.waitText("third answer")
	d.submit("/compact")
	screen := d.waitText("earlier context was compacted", "conversation compacted", "○ ready")
	if strings.Contains(screen, "## Goals") || strings.Contains(screen, "summarized") {
		t.Errorf("the summary call's stream leaked into the transcript:\n%s", screen)
	}
}

func TestEscCancelsACompactionAndAMessageSentMeanwhileStaysInView(t *testing.T) {
	long := strings.Repeat("detail ", 300)
	p := newScripted(
		textReply("", "first answer "+long),
		textReply("", "second answer "+long),
		textReply("", "third answer"),
		heldReply("## Goals"), // the summary call stalls
		textReply("", "answer after the cancelled compaction"),
	)
	b := newBackend(t, p)
	d := startUI(t, b, nil)
	for _, q := range []string{"first question", "second question", "third question"} {
		d.submit(q)
		d.waitText("○ ready", "› "+q)
	}
	d.submit("/compact")
	d.waitText("● compacting", "Esc cancels")
	<-p.holding
	d.submit("a message typed meanwhile")
	d.waitText("⏵ queued: a message typed meanwhile", "1 queued until the compaction ends")
	d.key(tcell.KeyEscape)
	screen := d.waitText("compaction cancelled, history left unchanged", "› a message typed meanwhile", "answer after the cancelled compaction", "○ ready")
	for _, gone := range []string{"queued", "cancelling", "earlier context was compacted"} {
		if strings.Contains(screen, gone) {
			t.Errorf("%q is on screen after the cancelled compaction:\n%s", gone, screen)
		}
	}
	if strings.Contains(screen, "compaction failed") || strings.Count(screen, "compaction cancelled") != 1 {
		t.Errorf("the cancellation is not reported once as a cancellation:\n%s", screen)
	}
}
