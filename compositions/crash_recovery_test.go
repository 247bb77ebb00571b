package compositions

import (
	"bytes"
	"os"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// TestACrashMidStreamKeepsWhatWasShown cuts a real log after the first
// streamed delta, as kill -9 would, and checks that resuming it (what ACP
// session/load does) keeps the partial answer as an interrupted assistant
// message that the transcript, the event list and search all see.
func TestACrashMidStreamKeepsWhatWasShown(t *testing.T) {
	// fakellm streams the text in two halves: "zebras grazing " and the rest.
	c := crashAfterFirstDelta(t, fakellm.Reply{Text: "again"})
	rt, id := c.rt, c.id

	b, err := rt.ResumeSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, events := b.Session().Snapshot()
	if err := rt.CloseSession(b); err != nil {
		t.Fatal(err)
	}
	var recovered *session.Event
	for i, e := range events {
		if e.Type == session.TypeAssistantMessage {
			recovered = &events[i]
		}
	}
	if recovered == nil {
		t.Fatal("the repair kept no assistant message")
	}
	var msg session.AssistantMessage
	if err := recovered.DecodeData(&msg); err != nil {
		t.Fatal(err)
	}
	if !msg.Interrupted || len(msg.Message.Content) != 1 || msg.Message.Content[0].Text != "zebras grazing " {
		t.Fatalf("recovered message = %s", recovered.Data)
	}

	snap, err := rt.Query.ReadSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(snap.Events, recovered.Seq, session.TypeAssistantMessage) {
		t.Error("sessions show does not list the recovered message")
	}
	surface, err := rt.Query.ReadSurface(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !hasEvent(surface.Events, recovered.Seq, session.TypeAssistantMessage) {
		t.Error("the recovered message is not part of the conversation")
	}
	searchFindsPartialAnswer(t, rt.Query, id, recovered.Seq)
}

// TestACrashedLogShowsItsPartialAnswerBeforeItIsResumed cuts a real log
// after the first streamed delta and reads it without resuming it, as dsh
// sessions show and search do: the partial answer is there as the
// interrupted message the repair will write, and the log is unchanged.
func TestACrashedLogShowsItsPartialAnswerBeforeItIsResumed(t *testing.T) {
	c := crashAfterFirstDelta(t)
	cfg, id := c.cfg, c.id

	// A fresh runtime, as a later dsh sessions show is.
	other := newRuntime(t, TUI, cfg)
	snap, err := other.Query.ReadSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var recovered *session.Event
	for i, e := range snap.Events {
		if e.Type == session.TypeAssistantMessage {
			recovered = &snap.Events[i]
		}
	}
	if recovered == nil {
		t.Fatal("sessions show of the crashed log has no assistant message")
	}
	var msg session.AssistantMessage
	if err := recovered.DecodeData(&msg); err != nil {
		t.Fatal(err)
	}
	if !msg.Interrupted || len(msg.Message.Content) != 1 || msg.Message.Content[0].Text != "zebras grazing " {
		t.Fatalf("shown message = %s", recovered.Data)
	}
	if last := snap.Events[len(snap.Events)-1]; last.Type != session.TypeTurnEnd {
		t.Errorf("the shown turn ends with %s, want turn/end", last.Type)
	}
	searchFindsPartialAnswer(t, other.Query, id, recovered.Seq)
	if now, err := os.ReadFile(c.path); err != nil || !bytes.Equal(now, c.kept) {
		t.Errorf("reading the crashed log changed it (%v)", err)
	}

	// Resuming writes exactly what was shown.
	b, err := other.ResumeSession(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, events := b.Session().Snapshot()
	if err := other.CloseSession(b); err != nil {
		t.Fatal(err)
	}
	for i, e := range snap.Events {
		if i >= len(events) || !bytes.Equal(events[i].Data, e.Data) || events[i].Type != e.Type {
			t.Fatalf("event %d as shown (%s) differs from the repaired log", i, e.Type)
		}
	}
}

// crashedLog is a session whose log a crash cut mid-stream: kept is what
// its log at path holds.
type crashedLog struct {
	rt       *Runtime
	cfg      *config.Config
	id, path string
	kept     []byte
}

// crashAfterFirstDelta runs one real turn whose answer fakellm streams in
// two halves ("zebras grazing " and the rest), closes the session, and cuts
// its log just after the first streamed delta, as a kill -9 mid-stream
// leaves it. later are the replies for turns after that one.
func crashAfterFirstDelta(t *testing.T, later ...fakellm.Reply) crashedLog {
	t.Helper()
	srv := fakellm.New(append([]fakellm.Reply{{Text: "zebras grazing tailwords never"}}, later...)...)
	t.Cleanup(srv.Close)
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
	entry, err := rt.Store.Stat(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(entry.Path)
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(log, []byte(`"delta":"zebras grazing "`))
	if cut < 0 {
		t.Fatalf("no first delta in the log:\n%s", log)
	}
	cut += bytes.IndexByte(log[cut:], '\n') + 1
	if err := os.WriteFile(entry.Path, log[:cut], 0o600); err != nil {
		t.Fatal(err)
	}
	return crashedLog{rt: rt, cfg: cfg, id: id, path: entry.Path, kept: log[:cut]}
}

func hasEvent(events []session.Event, seq int, typ string) bool {
	for _, e := range events {
		if e.Seq == seq && e.Type == typ {
			return true
		}
	}
	return false
}

// searchFindsPartialAnswer checks that searching the session for the
// partial answer finds the recovered assistant message at seq.
func searchFindsPartialAnswer(t *testing.T, q *sessionquery.Service, id string, seq int) {
	t.Helper()
	page, err := q.SearchEvents(t.Context(), sessionquery.EventSearchRequest{SessionID: id, Query: "zebras"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range page.Items {
		if h.Seq == seq && h.Type == session.TypeAssistantMessage {
			return
		}
	}
	t.Errorf("search for the partial answer found %+v", page.Items)
}
