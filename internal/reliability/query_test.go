package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	sqtools "github.com/seed-e9b4dba4/dsh/plugins/sessionquery"
)

// hostile is one query meant to break a naive FTS5 front end.
type hostile struct {
	name string
	q    string
	// invalid: the query has no searchable text, carries NUL or is longer
	// than searchindex.MaxQueryBytes, and must be refused with
	// INVALID_QUERY.
	invalid bool
	// large queries are not planted in a log (they are not in any).
	large bool
}

// loneSurrogate is what encoding/json makes of "\ud800": U+FFFD, as an
// editor or the model would send it.
func loneSurrogate(rest string) string {
	var s string
	if err := json.Unmarshal([]byte(`"\ud800`+rest+`"`), &s); err != nil {
		panic(err)
	}
	return s
}

var hostileQueries = []hostile{
	{name: "lone quote", q: `"`},
	{name: "unbalanced quote", q: `"alpha`},
	{name: "doubled quotes", q: `""alpha""`},
	{name: "OR", q: `alpha OR beta`},
	{name: "bare OR", q: `OR`},
	{name: "AND NOT", q: `alpha AND NOT beta`},
	{name: "NEAR open", q: `NEAR(`},
	{name: "NEAR group", q: `NEAR(alpha beta, 2)`},
	{name: "star", q: `*`},
	{name: "prefix star", q: `alph*`},
	{name: "caret", q: `^alpha`},
	{name: "minus", q: `-alpha`},
	{name: "column filter", q: `text:alpha`},
	{name: "column set", q: `{text session_id}: alpha`},
	{name: "open paren", q: `(alpha`},
	{name: "SQL", q: `'; DROP TABLE persisted_docs; --`},
	{name: "lone surrogate", q: loneSurrogate(` alpha`)},
	{name: "invalid UTF-8", q: "alpha \xff\xfe beta"},
	{name: "highlight markers", q: "\uFDD0alpha\uFDD1"},
	{name: "control characters", q: "alpha\x1b[31m beta"},
	{name: "NUL", q: "alpha\x00beta", invalid: true},
	{name: "whitespace only", q: " \t\n\u00a0\u2028 ", invalid: true},
	{name: "1 MB of words", q: strings.Repeat("alpha ", 1<<20/6), large: true, invalid: true},
	{name: "1 MB token", q: strings.Repeat("a", 1<<20), large: true, invalid: true},
	{name: "1 MB of quotes", q: strings.Repeat(`"`, 1<<20), large: true, invalid: true},
}

// ftsTokens splits text the way the index's unicode61 tokenizer does for
// the ASCII and symbol text of these tests: runs of letters and digits,
// case-folded. U+FFFD, quotes and operators separate.
func ftsTokens(s string) []string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// holdsPhrase reports whether doc's tokens contain q's as a run.
func holdsPhrase(doc, q []string) bool {
	if len(q) == 0 {
		return false
	}
	for i := 0; i+len(q) <= len(doc); i++ {
		if slices.Equal(doc[i:i+len(q)], q) {
			return true
		}
	}
	return false
}

// hostileCorpus is a home whose workspace holds one session per hostile
// query, each with a user message carrying the query verbatim.
type hostileCorpus struct {
	h       hermetic
	planted map[string]string // query name -> session id
}

func newHostileCorpus(t *testing.T) hostileCorpus {
	t.Helper()
	c := hostileCorpus{h: newHermetic(t), planted: map[string]string{}}
	st := store.New(c.h.config(t, "").Value("sessions.dir").(string), store.Options{Log: slog.New(slog.DiscardHandler)})
	for i, hq := range hostileQueries {
		if hq.large || hq.invalid {
			continue
		}
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i+1)
		h := session.Header{Version: session.FormatVersion, ID: id, CreatedAt: int64(1_750_000_000_000 + i), Cwd: &c.h.cwd, DelegationDepth: session.Ptr(0)}
		text := fmt.Sprintf("probe%02d %s tail", i, hq.q)
		events := []session.Event{{Type: session.TypeUserMessage, Seq: 0, Time: h.CreatedAt, Data: session.MustMarshal(userMessage(text, "u")), SurfaceOp: session.OpAppend}}
		w, err := st.Create(h, events)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		c.planted[hq.name] = id
	}
	return c
}

// leaksEngine reports text that shows the FTS5 engine parsed the query.
func leaksEngine(text string) bool {
	l := strings.ToLower(text)
	return strings.Contains(l, "fts5") || strings.Contains(l, "syntax error") || strings.Contains(l, "sql logic") || strings.Contains(l, "panic")
}

// TestHostileQueriesAreDataInTheServiceAndTheModelTools sends every
// hostile query through SearchSessions, SearchEvents and the session_search
// and session_event_search tools of an ACP runtime with the session-query
// profile: each is refused as INVALID_QUERY (no text, or NUL) or matched
// literally, as the phrase of its words: the session holding it is found,
// and every hit holds that phrase.
func TestHostileQueriesAreDataInTheServiceAndTheModelTools(t *testing.T) {
	c := newHostileCorpus(t)
	// A 5 s search budget bounds the megabyte query when the machine is
	// loaded (it takes about a second alone, ten under the race detector).
	rt := newRuntime(t, compositions.ACP, c.h.config(t, "session-query", "plugins.session_query.search_timeout_ms=5000"))
	ctx := context.Background()
	tr, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		t.Fatal(err)
	}
	docText := map[docRef]string{}
	for _, d := range tr.docs {
		docText[docRef{d.SessionID, d.Seq}] = d.Text
	}
	caller := session.NewLive(session.Header{Version: session.FormatVersion, ID: "caller", CreatedAt: 1, Cwd: &c.h.cwd}, nil, session.LiveOptions{})
	if err := rt.Sessions.Attach(caller); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Sessions.Detach(caller) })
	runTool := func(name string, args any) tools.Result {
		raw, err := json.Marshal(args)
		if err != nil {
			t.Fatal(err)
		}
		return rt.Tools.Run(ctx, &tools.Call{CallID: "c1", Name: name, Arguments: string(raw), Session: caller, Cwd: c.h.cwd})
	}
	for _, hq := range hostileQueries {
		t.Run(hq.name, func(t *testing.T) {
			want := ftsTokens(hq.q)
			page, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: hq.q, Limit: ptr(100)})
			if hq.invalid {
				if qe := queryErr(t, err); qe.Code != sessionquery.CodeInvalidQuery || leaksEngine(qe.Message) {
					t.Fatalf("%s: %q", qe.Code, qe.Message)
				}
			} else {
				if err != nil {
					t.Fatalf("search failed: %v", err)
				}
				for _, it := range page.Items {
					ref := docRef{it.Header.ID, it.BestMatch.Seq}
					if !holdsPhrase(ftsTokens(docText[ref]), want) {
						t.Errorf("hit %s %q does not hold the phrase %q", ref, docText[ref], want)
					}
				}
				planted, ok := c.planted[hq.name]
				found := slices.ContainsFunc(page.Items, func(it sessionquery.SessionHit) bool { return it.Header.ID == planted })
				if ok && len(want) > 0 && !found {
					t.Errorf("the session holding %q verbatim was not found (%d hits)", hq.q, len(page.Items))
				}
				if len(want) == 0 && len(page.Items) > 0 {
					t.Errorf("a query without words found %d sessions", len(page.Items))
				}
				if ok && len(want) > 0 {
					ev, err := rt.Query.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: planted, Query: hq.q})
					if err != nil || len(ev.Items) != 1 || ev.Items[0].Seq != 0 {
						t.Errorf("event search in %s: %+v, %v", planted, ev.Items, err)
					}
				}
			}
			// The model-facing tools: a typed tool error or a rendered
			// result, never the engine's own words.
			for _, call := range []struct {
				name string
				args map[string]any
			}{
				{sqtools.ToolSessionSearch, map[string]any{"query": hq.q}},
				{sqtools.ToolEventSearch, map[string]any{"query": hq.q, "session_id": firstPlanted(c)}},
			} {
				res := runTool(call.name, call.args)
				text := resultText(res)
				if leaksEngine(text) {
					t.Errorf("%s answered with the engine's error: %.300s", call.name, text)
				}
				if res.IsError != hq.invalid {
					t.Errorf("%s: error %v, want %v: %.300s", call.name, res.IsError, hq.invalid, text)
				}
				if res.IsError && (res.Error == nil || res.Error.Code == "") {
					t.Errorf("%s: an untyped error: %.300s", call.name, text)
				}
			}
			if planted, ok := c.planted[hq.name]; ok && len(want) > 0 {
				if text := resultText(runTool(sqtools.ToolSessionSearch, map[string]any{"query": hq.q})); !strings.Contains(text, "Session "+planted) {
					t.Errorf("session_search does not list %s:\n%.500s", planted, text)
				}
			}
		})
	}
	// A lone surrogate exactly as the model's JSON carries it.
	res := rt.Tools.Run(ctx, &tools.Call{CallID: "c2", Name: sqtools.ToolSessionSearch, Arguments: `{"query":"\ud800 probe16"}`, Session: caller, Cwd: c.h.cwd})
	if text := resultText(res); res.IsError || !strings.Contains(text, "Session "+c.planted["lone surrogate"]) {
		t.Errorf("a raw \\ud800 in the arguments: %.500s", text)
	}
}

func firstPlanted(c hostileCorpus) string { return c.planted[hostileQueries[0].name] }

func resultText(r tools.Result) string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// TestHostileQueriesAreDataInDshSessionsSearch runs the built binary's
// dsh sessions search --json with every hostile query that a command line
// can carry (argv cannot hold NUL, and one argument holds at most 128 KiB,
// so the 1 MB queries travel as several arguments, which the command
// joins with spaces).
func TestHostileQueriesAreDataInDshSessionsSearch(t *testing.T) {
	bin := dshBinary(t)
	c := newHostileCorpus(t)
	tr, err := readTruth(context.Background(), c.h.config(t, "").Value("sessions.dir").(string))
	if err != nil {
		t.Fatal(err)
	}
	docText := map[docRef]string{}
	for _, d := range tr.docs {
		docText[docRef{d.SessionID, d.Seq}] = d.Text
	}
	for _, hq := range hostileQueries {
		if strings.ContainsRune(hq.q, 0) {
			continue
		}
		t.Run(hq.name, func(t *testing.T) {
			args := []string{"sessions", "search", "--json", "--limit", "100", "--home", c.h.home, "--"}
			args = append(args, argvChunks(hq.q)...)
			cmd := exec.Command(bin, args...)
			cmd.Dir = c.h.cwd
			cmd.Env = []string{"HOME=" + c.h.root, "PATH=" + os.Getenv("PATH")}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if leaksEngine(stderr.String()) || leaksEngine(stdout.String()) {
				t.Fatalf("the engine's error reached the user: %.500s %.500s", stderr.String(), stdout.String())
			}
			var ee *exec.ExitError
			if hq.invalid {
				if !errors.As(err, &ee) || !strings.Contains(stderr.String(), "query") {
					t.Fatalf("exit %v; stderr %q", err, stderr.String())
				}
				return
			}
			if err != nil {
				t.Fatalf("exit %v; stderr:\n%s", err, stderr.String())
			}
			// The CLI's hit: its times are RFC 3339 text, not the stored
			// milliseconds, so only the fields used here are decoded.
			type cliHit struct {
				Session   struct{ ID string } `json:"session"`
				BestMatch struct{ Seq int }   `json:"bestMatch"`
			}
			var hits []cliHit
			if err := json.Unmarshal(stdout.Bytes(), &hits); err != nil {
				t.Fatalf("stdout is not the JSON hit list: %v\n%.500s", err, stdout.String())
			}
			want := ftsTokens(strings.Join(argvChunks(hq.q), " "))
			for _, h := range hits {
				ref := docRef{h.Session.ID, h.BestMatch.Seq}
				if !holdsPhrase(ftsTokens(docText[ref]), want) {
					t.Errorf("hit %s %q does not hold the phrase %q", ref, docText[ref], want)
				}
			}
			if planted, ok := c.planted[hq.name]; ok && len(want) > 0 && !slices.ContainsFunc(hits, func(h cliHit) bool {
				return h.Session.ID == planted
			}) {
				t.Errorf("the session holding %q verbatim was not found", hq.q)
			}
		})
	}
}

// argvChunks splits q into arguments of at most 120 KiB, at spaces where
// it has them, so that joining them with spaces gives q back.
func argvChunks(q string) []string {
	const max = 120 << 10
	var out []string
	for len(q) > max {
		cut := strings.LastIndexByte(q[:max], ' ')
		if cut <= 0 {
			cut = max
			for cut > 0 && !utf8.RuneStart(q[cut]) {
				cut--
			}
			out = append(out, q[:cut])
			q = q[cut:]
			continue
		}
		out = append(out, q[:cut])
		q = q[cut+1:]
	}
	return append(out, q)
}
