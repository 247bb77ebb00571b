package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

func newSessionsShowCmd(g *globals) *cobra.Command {
	var all, asJSON, events, full bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session as a readable transcript, or its raw events",
		Long: `Show a session as a readable transcript: prompts, replies, tool calls with the
start of their results, todo updates and how each turn ended. --full shows
tool results whole. --events lists every raw event instead, with its seq,
time, type, surface (current, shadowed or log-only) and text; add --json for
the stored events themselves.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.sessionArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := g.openQuery()
			if err != nil {
				return err
			}
			defer env.Close()
			ctx := cmd.Context()
			rec, err := env.scope(ctx, args[0], all)
			if err != nil {
				return err
			}
			snap, err := env.Query.ReadSession(ctx, rec.Header.ID)
			if err != nil {
				return err
			}
			if events {
				records, err := env.Query.ListEvents(ctx, rec.Header.ID)
				if err != nil {
					return err
				}
				return writeEvents(g.stdout, snap, records, asJSON)
			}
			if asJSON {
				return writeJSON(g.stdout, snap)
			}
			return writeTranscript(g.stdout, snap, full)
		},
	}
	cmd.Flags().BoolVar(&all, "all-workspaces", false, "allow a session of another workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the header and the stored events")
	cmd.Flags().BoolVar(&events, "events", false, "list the raw events with their seqs and surfaces")
	cmd.Flags().BoolVar(&full, "full", false, "show tool results whole")
	return cmd
}

// shownEvent is one event of dsh sessions show --events --json.
type shownEvent struct {
	sessionquery.EventRecord
	Event json.RawMessage `json:"event"`
}

func writeEvents(w io.Writer, snap sessionquery.LogSnapshot, records []sessionquery.EventRecord, asJSON bool) error {
	if asJSON {
		out := make([]shownEvent, len(records))
		for i, r := range records {
			raw, err := session.Marshal(snap.Events[i])
			if err != nil {
				return err
			}
			out[i] = shownEvent{EventRecord: r, Event: raw}
		}
		return writeJSON(w, out)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEQ\tTIME\tTYPE\tSURFACE\tTEXT")
	for i, r := range records {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", r.Seq, isoTime(r.Time), termtext.Line(r.Type), r.Surface, oneLine(sessionquery.ExtractText(snap.Events[i]), 80))
	}
	return tw.Flush()
}

// resultLines is how much of a tool result the transcript shows by default.
const resultLines = 8

func writeTranscript(w io.Writer, snap sessionquery.LogSnapshot, full bool) error {
	h := snap.Session
	title := "untitled"
	if t, err := session.FoldTitle(snap.Events); err == nil && t != nil {
		title = t.Title
	}
	fmt.Fprintf(w, "Session %s · %s\n", termtext.Line(h.ID), oneLine(title, 80))
	fmt.Fprintf(w, "created %s · workspace %s · %d events\n", formatTime(h.CreatedAt), termtext.Line(workspaceOf(h)), len(snap.Events))
	if h.ParentSession != nil {
		seed := 0
		if h.SeedLength != nil {
			seed = *h.SeedLength
		}
		fmt.Fprintf(w, "forked from %s (its first %d events)\n", termtext.Line(*h.ParentSession), seed)
	}
	for _, e := range snap.Events {
		switch e.Type {
		case session.TypeTurnStart:
			var t session.TurnStart
			if e.DecodeData(&t) == nil {
				fmt.Fprintf(w, "\n── turn %d · %s ──\n", t.Turn, formatTime(e.Time))
			}
		case session.TypeUserMessage:
			var m session.Message
			if e.DecodeData(&m) != nil || prompt.IsRuntimeContext(m) {
				// The runtime context (workspace, date, mode) is for the
				// model; --events shows it.
				continue
			}
			label := "You"
			switch op, _ := e.Op(); {
			case op.Replace:
				label = "Summary (replaces earlier messages)"
			case m.SourceKind() != session.SourceUser:
				label = "Context (" + m.SourceKind() + ")"
			}
			block(w, label, session.JoinText(m.Content), 0)
		case session.TypeAssistantMessage:
			var a session.AssistantMessage
			if e.DecodeData(&a) != nil {
				continue
			}
			if text := session.JoinText(a.Message.Content); strings.TrimSpace(text) != "" {
				block(w, "Assistant", text, 0)
			}
		case session.TypeToolCall:
			var c session.ToolCall
			if e.DecodeData(&c) == nil {
				fmt.Fprintf(w, "  → %s %s\n", termtext.Line(c.Name), oneLine(c.Arguments, 160))
			}
		case session.TypeToolResult:
			var r session.ToolResult
			if e.DecodeData(&r) != nil {
				continue
			}
			label := "  ← result"
			if r.Error != nil {
				label = fmt.Sprintf("  ← error %s (%s)", termtext.Line(r.Error.Name), termtext.Line(r.Error.Code))
			}
			text := ""
			for _, b := range r.Message.Content {
				text += session.JoinText(b.Content)
			}
			limit := resultLines
			if full {
				limit = 0
			}
			block(w, label, text, limit)
		case session.TypeTodoWrite:
			var t session.TodoWrite
			if e.DecodeData(&t) != nil {
				continue
			}
			fmt.Fprintln(w, "  Todos:")
			for _, todo := range t.Todos {
				mark := map[string]string{session.TodoCompleted: "[x]", session.TodoInProgress: "[~]"}[todo.Status]
				if mark == "" {
					mark = "[ ]"
				}
				fmt.Fprintf(w, "    %s %s\n", mark, oneLine(todo.Content, 120))
			}
		case session.TypeTurnEnd:
			var t session.TurnEnd
			if e.DecodeData(&t) != nil || t.Reason.Kind == session.EndCompleted {
				continue
			}
			msg := t.Reason.Kind
			if t.Reason.Error != nil {
				msg += ": " + oneLine(t.Reason.Error.Message, 160)
			}
			fmt.Fprintf(w, "  (turn ended: %s)\n", msg)
		}
	}
	return nil
}

// block prints a labelled text, indented; limit > 0 keeps that many lines.
func block(w io.Writer, label, text string, limit int) {
	text = strings.TrimRight(termtext.Text(text), "\n")
	fmt.Fprintf(w, "%s:\n", label)
	if text == "" {
		fmt.Fprintln(w, "    (empty)")
		return
	}
	lines := strings.Split(text, "\n")
	shown := lines
	if limit > 0 && len(lines) > limit {
		shown = lines[:limit]
	}
	for _, l := range shown {
		fmt.Fprintf(w, "    %s\n", l)
	}
	if len(shown) < len(lines) {
		fmt.Fprintf(w, "    … %d more lines (--full shows them)\n", len(lines)-len(shown))
	}
}
