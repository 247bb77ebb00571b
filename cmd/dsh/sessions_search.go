package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

// searchHit is one session of dsh sessions search --json.
type searchHit struct {
	Session   jsonHeader `json:"session"`
	Title     *string    `json:"title"`
	Live      bool       `json:"live"`
	Persisted bool       `json:"persisted"`
	BestMatch jsonHit    `json:"bestMatch"`
}

func newSessionsSearchCmd(g *globals) *cobra.Command {
	var all, asJSON bool
	var since, until string
	var types []string
	var limit int
	cmd := &cobra.Command{
		Use:   "search QUERY",
		Short: "Search past sessions' text, one hit per session with a snippet",
		Long: `Search the text of past sessions (prompts, replies, tool calls and results,
todos) and print the matching sessions, strongest first, each with its best
matching event and a snippet. The query is matched as a phrase of words:
"failing test" finds those two words in a row; case and accents are ignored;
quotes, * and operators are just text.

--since and --until take an ISO 8601 date or time (2025-06-15, 2025-06-15T14:30,
2025-06-15T14:30:00Z) or an age (30m, 12h, 7d, 2w) and keep only events in that
range. --type keeps only events of the given types (e.g. user/message,
assistant/message, tool/result; repeat or separate with commas).

The first search after many new sessions brings the index up to date, with a
progress bar on a terminal.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			usage := func(err error) error { return usageError{err: err, cmdPath: cmd.CommandPath()} }
			now := time.Now()
			var events []sessionquery.EventFilter
			if since != "" || until != "" {
				f := sessionquery.EventFilter{Kind: sessionquery.KindTime}
				if since != "" {
					v, err := parseWhen(since, now)
					if err != nil {
						return usage(fmt.Errorf("--since: %w", err))
					}
					f.From = &v
				}
				if until != "" {
					v, err := parseWhen(until, now)
					if err != nil {
						return usage(fmt.Errorf("--until: %w", err))
					}
					f.To = &v
				}
				if f.From != nil && f.To != nil && *f.From > *f.To {
					return usage(errors.New("--since is later than --until"))
				}
				events = append(events, f)
			}
			if len(types) > 0 {
				var values []string
				for _, t := range types {
					for _, v := range strings.Split(t, ",") {
						if v = strings.TrimSpace(v); v != "" {
							if !slices.Contains(searchableTypes(), v) {
								return usage(fmt.Errorf("--type %q is not an event type search finds; use one of %s", v, strings.Join(searchableTypes(), ", ")))
							}
							values = append(values, v)
						}
					}
				}
				events = append(events, sessionquery.EventFilter{Kind: sessionquery.KindType, Values: values})
			}
			env, err := g.openQuery()
			if err != nil {
				return err
			}
			defer env.Close()
			ix, err := env.index()
			if err != nil {
				return err
			}
			// The update, the search and the titles see one state of
			// the history, brought up to date once.
			ctx := searchindex.OneLook(cmd.Context())
			bar := newProgress(g.stderr, "indexing sessions")
			err = ix.Update(ctx, bar.update)
			bar.done()
			if err != nil {
				return err
			}
			defer collectLittle()()
			req := sessionquery.SessionSearchRequest{Query: strings.Join(args, " "), EventFilters: events, Limit: &limit}
			if !all {
				req.SessionFilters = []sessionquery.SessionFilter{sessionquery.WorkspaceFilter(env.ws)}
			}
			page, err := ix.SearchSessions(ctx, req)
			if err != nil {
				return err
			}
			ids := make([]string, len(page.Items))
			for i, it := range page.Items {
				ids[i] = it.Header.ID
			}
			titles := env.titles(ctx, ids)
			if asJSON {
				out := make([]searchHit, len(page.Items))
				for i, it := range page.Items {
					out[i] = searchHit{Session: headerJSON(it.Header), Live: it.Live, Persisted: it.Persisted, BestMatch: hitJSON(it.BestMatch)}
					if t, ok := titles[it.Header.ID]; ok {
						out[i].Title = &t
					}
				}
				return writeJSON(g.stdout, out)
			}
			if len(page.Items) == 0 {
				scope := "in " + env.ws.Given + " (--all-workspaces searches everywhere)"
				if all {
					scope = "in any workspace"
				}
				fmt.Fprintf(g.stderr, "No sessions match %q %s.\n", req.Query, termtext.Line(scope))
				return nil
			}
			st := g.styleFor(g.stdout)
			for i, it := range page.Items {
				if i > 0 {
					fmt.Fprintln(g.stdout)
				}
				title := "untitled"
				if t, ok := titles[it.Header.ID]; ok {
					title = oneLine(t, 70)
				}
				fmt.Fprintf(g.stdout, "%s  %s  %s\n", st.id(termtext.Line(it.Header.ID)), formatTime(it.Header.CreatedAt), st.bold(title))
				if all {
					fmt.Fprintf(g.stdout, "  %s\n", st.dim("workspace "+termtext.Line(workspaceOf(it.Header))))
				}
				m := it.BestMatch
				fmt.Fprintf(g.stdout, "  %s\n", st.dim(fmt.Sprintf("seq %d · %s · %s", m.Seq, termtext.Line(m.Type), formatTime(m.Time))))
				fmt.Fprintf(g.stdout, "  %s\n", st.matches(oneLine(m.Snippet, 400), req.Query))
			}
			if page.NextCursor != nil {
				fmt.Fprintf(g.stderr, "More sessions match; raise --limit (at most %d) or narrow the query.\n", env.cfg.Value("session_query.max_limit"))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all-workspaces", false, "search the sessions of every workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: [{session, title, live, persisted, bestMatch}]")
	cmd.Flags().StringVar(&since, "since", "", "only events at or after this time (ISO 8601) or age (7d, 12h)")
	cmd.Flags().StringVar(&until, "until", "", "only events at or before this time (ISO 8601) or age (7d, 12h)")
	cmd.Flags().StringSliceVar(&types, "type", nil, "only events of these types (repeatable, comma-separated)")
	cmd.Flags().IntVar(&limit, "limit", 20, "show at most this many sessions")
	_ = cmd.RegisterFlagCompletionFunc("type", completeEventTypes)
	return cmd
}

// searchMemoryLimit is the soft limit of Go's memory while a search ranks
// and prints (see collectLittle).
const searchMemoryLimit = 64 << 20

// collectLittle turns the garbage collector off, below a soft limit of
// searchMemoryLimit, until the returned function restores the settings;
// GOGC or GOMEMLIMIT in the environment keep their say. The search of a
// brief process, once the index is up to date, allocates a few MB that
// stay live to its end (decoded term summaries, candidates: ~4 MB for an
// identifier of the large preset; ~30 MB of RSS on the tiny preset's
// 50,000 sessions with or without collections), and the two collections
// that ran freed little: without them the identifier and phrase searches
// took ~5% less time. Catching up with the logs, whose garbage is not
// bounded by the answer, runs before, with the default settings.
func collectLittle() (restore func()) {
	var undo []func()
	if _, set := os.LookupEnv("GOGC"); !set {
		percent := debug.SetGCPercent(-1)
		undo = append(undo, func() { debug.SetGCPercent(percent) })
	}
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		limit := debug.SetMemoryLimit(searchMemoryLimit)
		undo = append(undo, func() { debug.SetMemoryLimit(limit) })
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// searchableTypes are the event types whose text the index holds
// (sessionquery.ExtractText), the values --type accepts.
func searchableTypes() []string {
	return []string{
		session.TypeUserMessage, session.TypeAssistantMessage, session.TypeToolCall, session.TypeToolResult,
		session.TypeTodoWrite, session.TypeTurnEnd,
	}
}

var agePattern = lazyregexp.New(`^(\d+)([smhdw])$`)

// parseWhen reads an ISO 8601 date or time (a date or a time without a
// zone is local time) or an age before now, as epoch milliseconds.
func parseWhen(s string, now time.Time) (float64, error) {
	s = strings.TrimSpace(s)
	if m := agePattern.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return 0, err
		}
		unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
		return float64(now.Add(-time.Duration(n) * unit).UnixMilli()), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return float64(now.Add(-d).UnixMilli()), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return float64(t.UnixMilli()), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return float64(t.UnixMilli()), nil
		}
	}
	return 0, fmt.Errorf("%q is neither an ISO 8601 date or time (2025-06-15, 2025-06-15T14:30:00Z) nor an age (30m, 12h, 7d, 2w)", s)
}
