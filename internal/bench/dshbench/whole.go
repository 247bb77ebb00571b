package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/bench"
)

// The whole-process rows run the built dsh binary as a user runs it from a
// shell: a new process each time, on the corpus home, warm page cache.
// Each search is paired with rg -l -F over the same logs in the same loop,
// so both see the same machine load.

// workspaceSessions is how many sessions the benchmark's own workspace
// (a real directory, so that `dsh sessions list` can run in it) holds.
const workspaceSessions = 47

// wholeRuns is the number of measured runs of each whole-process row.
func wholeRuns(runs int) int { return max(7, min(runs, 11)) }

type wholeSearch struct {
	query
	DSH  latency `json:"dsh"`
	CPU  latency `json:"cpu"`
	RG   latency `json:"rg"`
	Hits int     `json:"hits"`
}

type wholeResult struct {
	Runs int `json:"runs"`
	// Floor is the cheapest Go process (internal/bench/floor) and Version
	// is `dsh version`: what every row pays before it reads anything.
	Floor      latency       `json:"floor"`
	Version    latency       `json:"version"`
	VersionCPU latency       `json:"versionCPU"`
	Searches   []wholeSearch `json:"searches"`
	// FirstIdent is an identifier's first search (a new one each run),
	// which counts its parts phrase before it can record it.
	FirstIdent wholeSearch   `json:"firstIdent"`
	RGMissing  bool          `json:"rgMissing"`
	List       latency       `json:"list"`
	ListCPU    latency       `json:"listCPU"`
	ListRows   int           `json:"listRows"`
	ListAll    latency       `json:"listAll"`
	ListAllCPU latency       `json:"listAllCPU"`
	Status     latency       `json:"status"`
	StatusCPU  latency       `json:"statusCPU"`
	Rebuild    rebuildResult `json:"rebuild"`
	SearchRSS  int64         `json:"searchRSS"`
	ListRSS    int64         `json:"listRSS"`
	ACPInit    latency       `json:"acpInit"`
	ACPList    latency       `json:"acpList"`
	ACPListed  int           `json:"acpListed"`
	ACPLoad    latency       `json:"acpLoad"`
	ACPLoaded  int           `json:"acpLoaded"` // events of the loaded session
	ACPReplay  int           `json:"acpReplay"` // session/update frames of its replay
	Resume     resumeResult  `json:"resume"`
	Appended   latency       `json:"appended"`
	AppendCPU  latency       `json:"appendCPU"`
	AppendHits int           `json:"appendHits"`
	// BigAppend is the same on copies of the corpus's ten largest
	// sessions.
	BigAppend  bigAppend `json:"bigAppend"`
	LoadBefore string    `json:"loadBefore"`
	LoadAfter  string    `json:"loadAfter"`
}

// workspaceDir is the benchmark's own workspace under the corpus
// directory, with symlinks resolved (it is compared with getcwd).
func workspaceDir(l layout) (string, error) {
	dir := filepath.Join(l.dir, "workspace")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(dir)
}

// ensureWorkspace gives the benchmark's workspace its sessions, each a
// completed 100-event turn and a title, which the /resume picker shows. A
// reused corpus keeps them, except a session that holds other events (the
// appended-events row grows ten of them, and an older harness left them
// grown or untitled): it is made again, so that every run measures
// sessions of the same size.
func ensureWorkspace(ctx context.Context, l layout) (string, error) {
	dir, err := workspaceDir(l)
	if err != nil {
		return "", err
	}
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC).UnixMilli()
	for i := range workspaceSessions {
		h := session.Header{Version: session.FormatVersion, ID: fmt.Sprintf("%s%07d", workspaceIDPrefix, i),
			CreatedAt: base + int64(i)*60_000, Cwd: &dir, DelegationDepth: session.Ptr(0)}
		turn := turnWith(0, 0, h.CreatedAt, "set up the benchmark workspace")
		events := append(turn, titleEvent(len(turn), turn[len(turn)-1].Time+1, fmt.Sprintf("%s %02d", resumeTitle, i)))
		if err := ensureSession(ctx, st, h, events); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// ensureSession makes the session h with events unless the store holds
// it with that many events: one holding another number is removed and
// made again.
func ensureSession(ctx context.Context, st *store.Store, h session.Header, events []session.Event) error {
	if entry, err := st.Stat(ctx, h.ID); err == nil {
		_, held, err := st.Inspect(ctx, h.ID)
		if err != nil {
			return err
		}
		if len(held) == len(events) {
			return nil
		}
		if err := os.RemoveAll(filepath.Dir(entry.Path)); err != nil {
			return err
		}
	}
	w, err := st.Create(h, events)
	if err != nil {
		return err
	}
	return w.Close()
}

// titleEvent titles a session after its first prompt (seq 1).
func titleEvent(seq int, t int64, title string) session.Event {
	return session.Event{Type: session.TypeSessionTitle, Seq: seq, Time: t,
		Data: session.MustMarshal(session.SessionTitle{Title: title, MessageSeqs: []int{1}, Source: json.RawMessage(`{"kind":"fallback"}`)})}
}

// measureWhole runs the whole-process rows.
func measureWhole(ctx context.Context, bins binaries, l layout, ws string, runs int, logf func(string, ...any)) (wholeResult, error) {
	bin := bins.dsh
	res := wholeResult{Runs: wholeRuns(runs), LoadBefore: loadAvg()}
	root, err := os.MkdirTemp("", "dshbench-whole-")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(root)
	env := []string{"HOME=" + root, "PATH=" + os.Getenv("PATH"), "PWD=" + ws}
	dsh := func(args ...string) (measured, error) {
		return runMeasured(ctx, bin, append([]string{"--home", l.home}, args...), env, ws, os.Stderr)
	}
	// timedRun returns the wall and CPU times of a program run res.Runs
	// times (after one run that warms the cache), its peak RSS and its
	// last output.
	timedRun := func(run func() (measured, error)) (latency, latency, int64, []byte, error) {
		var walls, cpus []time.Duration
		var rss int64
		var out []byte
		for i := range res.Runs + 1 {
			m, err := run()
			if err != nil {
				return latency{}, latency{}, 0, nil, err
			}
			if i > 0 {
				walls, cpus = append(walls, m.wall), append(cpus, m.cpu)
			}
			rss, out = max(rss, m.maxRSS), m.stdout
		}
		return percentiles(walls), percentiles(cpus), rss, out, nil
	}
	// timed is timedRun of dsh with args.
	timed := func(args ...string) (latency, latency, int64, []byte, error) {
		return timedRun(func() (measured, error) { return dsh(args...) })
	}
	logf("the process floor: a minimal Go program, dsh version")
	if res.Floor, _, _, _, err = timedRun(func() (measured, error) {
		return runMeasured(ctx, bins.floor, nil, env, ws, os.Stderr)
	}); err != nil {
		return res, err
	}
	if res.Version, res.VersionCPU, _, _, err = timed("version"); err != nil {
		return res, err
	}
	rg, rgErr := exec.LookPath("rg")
	res.RGMissing = rgErr != nil
	for _, q := range queries {
		logf("dsh sessions search %q, paired with rg -l -F", q.Text)
		ws := wholeSearch{query: q}
		var dshRuns, cpuRuns, rgRuns []time.Duration
		for i := range res.Runs + 1 {
			m, err := dsh("sessions", "search", "--all-workspaces", "--json", q.Text)
			if err != nil {
				return res, err
			}
			res.SearchRSS = max(res.SearchRSS, m.maxRSS)
			var hits []json.RawMessage
			if err := json.Unmarshal(m.stdout, &hits); err != nil {
				return res, fmt.Errorf("dsh sessions search %q printed %q", q.Text, m.stdout)
			}
			ws.Hits = len(hits)
			if !res.RGMissing {
				start := time.Now()
				err := exec.CommandContext(ctx, rg, "-l", "-F", "--no-messages", q.Text, l.sessions).Run()
				var ee *exec.ExitError
				if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
					return res, fmt.Errorf("rg: %w", err)
				}
				if i > 0 {
					rgRuns = append(rgRuns, time.Since(start))
				}
			}
			if i > 0 {
				dshRuns, cpuRuns = append(dshRuns, m.wall), append(cpuRuns, m.cpu)
			}
		}
		ws.DSH, ws.CPU, ws.RG = percentiles(dshRuns), percentiles(cpuRuns), percentiles(rgRuns)
		res.Searches = append(res.Searches, ws)
	}
	logf("dsh sessions search, a new identifier each run")
	if res.FirstIdent, err = measureFirstIdentifiers(res.Runs, dsh); err != nil {
		return res, err
	}
	logf("dsh sessions list, dsh index status")
	var out []byte
	if res.List, res.ListCPU, res.ListRSS, out, err = timed("sessions", "list", "--json"); err != nil {
		return res, err
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(out, &rows); err != nil {
		return res, fmt.Errorf("dsh sessions list printed %q", out)
	}
	res.ListRows = len(rows)
	if res.ListAll, res.ListAllCPU, _, _, err = timed("sessions", "list", "--all-workspaces", "--limit", "50"); err != nil {
		return res, err
	}
	if res.Status, res.StatusCPU, _, _, err = timed("index", "status"); err != nil {
		return res, err
	}
	logf("ACP initialize, session/list and session/load")
	loadID, loadCwd, err := ensureLoadSession(ctx, l)
	if err != nil {
		return res, err
	}
	var inits, lists, loads []time.Duration
	for i := range res.Runs + 1 {
		s, err := bench.ACPColdStart(ctx, bench.ColdStartOptions{Bin: bin, Home: l.home, BaseURL: "http://127.0.0.1:9",
			List: true, ListCwd: ws, Load: loadID, LoadCwd: loadCwd})
		if err != nil {
			return res, err
		}
		if i > 0 {
			inits, lists, loads = append(inits, s.Initialize), append(lists, s.List), append(loads, s.Load)
		}
		res.ACPListed, res.ACPReplay = s.Listed, s.Replayed
	}
	res.ACPInit, res.ACPList, res.ACPLoad = percentiles(inits), percentiles(lists), percentiles(loads)
	if res.ACPLoaded, err = eventsOf(ctx, l, loadID); err != nil {
		return res, err
	}
	logf("TUI /resume picker (dsh tui in a tmux pane)")
	if res.Resume, err = measureResume(ctx, bin, l, ws, res.Runs); err != nil {
		return res, err
	}
	logf("search after another process appended 1,000 events to 10 sessions")
	if res.Appended, res.AppendCPU, res.AppendHits, err = measureAppended(ctx, l, workspaceIDs(10), res.Runs, dsh, "sessions", "search", "--json"); err != nil {
		return res, err
	}
	logf("search after another process appended 1,000 events to copies of the 10 largest sessions")
	if res.BigAppend, err = measureBigAppend(ctx, l, res.Runs, dsh); err != nil {
		return res, err
	}
	// Last: it replaces the index the rows above read.
	logf("dsh index rebuild (once)")
	if res.Rebuild, err = measureRebuild(l, dsh); err != nil {
		return res, err
	}
	res.LoadAfter = loadAvg()
	return res, nil
}

// workspaceIDPrefix starts the ids of the benchmark workspace's sessions.
const workspaceIDPrefix = "00000000-0000-4000-8000-bench"

// workspaceIDs are the ids of the first n sessions of the benchmark's
// workspace.
func workspaceIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s%07d", workspaceIDPrefix, i)
	}
	return ids
}

// bigAppend is the appended-events row on the corpus's largest sessions:
// the case that shows whether a catch-up costs what was appended or what
// the session weighs.
type bigAppend struct {
	Wall latency `json:"wall"`
	CPU  latency `json:"cpu"`
	Hits int     `json:"hits"`
	// MinBytes and MaxBytes bound the sizes of their logs.
	MinBytes int64 `json:"minBytes"`
	MaxBytes int64 `json:"maxBytes"`
}

// bigAppendPrefix starts the ids of the copies the appended-events row
// on the largest sessions appends to.
const bigAppendPrefix = "00000000-0000-4000-8000-bigappend"

// bigAppendCwd is the workspace of those copies, beside the corpus's
// own (see measureBigAppend).
const bigAppendCwd = "/dshbench/big-append"

// measureBigAppend appends to copies of the ten largest logs of the
// corpus, made for the row and removed after it, and searches every
// workspace for the new word. Appending to the logs themselves grew them
// by 1,000 events a run, run after run (from about 300 KB to 3.7 MB on
// the large preset), so that the row measured ever larger sessions.
//
// The copies live in a workspace of their own. Made in their originals'
// workspaces, they changed those directories moments before every run,
// and a search compares a directory changed within the last two seconds
// with the catalog (the index's drift check): the row measured ten
// directory scans of the whole corpus's workspaces (100+ ms on the tiny
// preset, whose workspaces hold ~4,000 sessions each) besides the
// appends it is about.
func measureBigAppend(ctx context.Context, l layout, runs int, dsh func(...string) (measured, error)) (res bigAppend, err error) {
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	if err := removeSessions(ctx, st, bigAppendPrefix); err != nil { // an interrupted run's
		return res, err
	}
	entries, err := st.List(ctx)
	if err != nil {
		return res, err
	}
	// The workspace's own sessions, which the row above grows, are not
	// the corpus's; nor is the session the ACP load row loads, which
	// must keep its size (on a corpus of small sessions it is among the
	// largest).
	entries = slices.DeleteFunc(entries, func(e store.Entry) bool {
		return strings.HasPrefix(e.Header.ID, workspaceIDPrefix) || e.Header.ID == loadSessionID
	})
	slices.SortFunc(entries, func(a, b store.Entry) int {
		return cmp.Or(cmp.Compare(b.Size, a.Size), strings.Compare(a.Header.ID, b.Header.ID))
	})
	entries = entries[:min(10, len(entries))]
	defer func() {
		if rerr := removeSessions(ctx, st, bigAppendPrefix); err == nil {
			err = rerr
		}
	}()
	ids := make([]string, len(entries))
	for i, e := range entries {
		h, events, err := st.Inspect(ctx, e.Header.ID)
		if err != nil {
			return res, err
		}
		h.ID, h.Cwd = fmt.Sprintf("%s%03d", bigAppendPrefix, i), session.Ptr(bigAppendCwd)
		w, err := st.Create(h, events)
		if err != nil {
			return res, err
		}
		if err := w.Close(); err != nil {
			return res, err
		}
		ids[i] = h.ID
		res.MaxBytes = max(res.MaxBytes, e.Size)
		if res.MinBytes == 0 || e.Size < res.MinBytes {
			res.MinBytes = e.Size
		}
	}
	res.Wall, res.CPU, res.Hits, err = measureAppended(ctx, l, ids, runs, dsh, "sessions", "search", "--all-workspaces", "--json")
	return res, err
}

// removeSessions removes the sessions whose ids start with prefix.
func removeSessions(ctx context.Context, st *store.Store, prefix string) error {
	entries, err := st.List(ctx)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Header.ID, prefix) {
			if err := os.RemoveAll(filepath.Dir(e.Path)); err != nil {
				return err
			}
		}
	}
	return nil
}

// measureAppended appends 100 events carrying a new word to each session
// of ids (as another dsh process would: Open, Append, Flush, Close), then
// times the next search for that word (search: the command and its flags;
// the word is added).
func measureAppended(ctx context.Context, l layout, ids []string, runs int, dsh func(...string) (measured, error), search ...string) (latency, latency, int, error) {
	st := store.New(l.sessions, store.Options{Log: slog.New(slog.DiscardHandler)})
	var samples, cpus []time.Duration
	hits := 0
	for round := range runs + 1 {
		word := fmt.Sprintf("appendround%dx%d", round, time.Now().UnixNano()%1_000_000)
		for _, id := range ids {
			w, _, events, err := st.Open(ctx, id)
			if err != nil {
				return latency{}, latency{}, 0, err
			}
			turn := 0
			for _, e := range events {
				if e.Type == session.TypeTurnStart {
					turn++
				}
			}
			err = w.Append(turnWith(len(events), turn, time.Now().UnixMilli(), "look at "+word+" again")...)
			if err == nil {
				err = w.Flush()
			}
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return latency{}, latency{}, 0, err
			}
		}
		m, err := dsh(append(slices.Clone(search), word)...)
		if err != nil {
			return latency{}, latency{}, 0, err
		}
		var found []json.RawMessage
		if err := json.Unmarshal(m.stdout, &found); err != nil {
			return latency{}, latency{}, 0, fmt.Errorf("dsh sessions search %q printed %q", word, m.stdout)
		}
		hits = len(found)
		if round > 0 {
			samples, cpus = append(samples, m.wall), append(cpus, m.cpu)
		}
	}
	return percentiles(samples), percentiles(cpus), hits, nil
}

// turnWith is a completed 100-event turn whose prompt is text.
func turnWith(next, turn int, t int64, text string) []session.Event {
	events := turnOf100(next, turn, t)
	events[1].Data = session.MustMarshal(session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)},
		Source: session.UserSource, ID: fmt.Sprintf("bench-u-%d", next)})
	return events
}

// loadAvg is the machine's 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Issue 15's targets for the whole-process rows.
const (
	targetProcSearch     = 30 * time.Millisecond
	targetProcCommonWord = 80 * time.Millisecond
	targetProcRGRatio    = 8.0
	targetProcList       = 40 * time.Millisecond
	targetProcListAll    = 60 * time.Millisecond
	targetProcStatus     = 20 * time.Millisecond
	targetACPInit        = 12 * time.Millisecond
	targetACPList        = 10 * time.Millisecond
	targetACPLoad        = 50 * time.Millisecond
	targetAppended       = 60 * time.Millisecond
	targetSearchRSS      = 80 << 20
)

func (r *report) printWhole(row func(...string)) {
	w := r.whole
	row()
	row(fmt.Sprintf("whole process (new dsh process per run, %d runs, load %s → %s)", w.Runs, w.LoadBefore, w.LoadAfter), "dsh", "rg -l -F, same loop", "rg ÷ dsh", "peak RSS")
	row("the floor: a Go program that prints one line (not dsh)", pp(w.Floor), "", "", "")
	row("dsh version (start-up only: no config, no index)", ppCPU(w.Version, w.VersionCPU), "", "", "")
	for _, q := range w.Searches {
		rg, ratioCell := "rg is not installed", "-"
		if !w.RGMissing {
			rg, ratioCell = pp(q.RG), times(q.RG.P50, q.DSH.P50, 1)
		}
		row(fmt.Sprintf("dsh sessions search --all-workspaces %q (%d hits)", q.Text, q.Hits), ppCPU(q.DSH, q.CPU), rg, ratioCell, mb(w.SearchRSS))
	}
	row(fmt.Sprintf("dsh sessions search --all-workspaces, a new identifier each run (%d hits)", w.FirstIdent.Hits), ppCPU(w.FirstIdent.DSH, w.FirstIdent.CPU), "its parts phrase is counted, then recorded", "", "")
	row(fmt.Sprintf("dsh sessions list (one workspace, %d sessions)", w.ListRows), ppCPU(w.List, w.ListCPU), "", "", mb(w.ListRSS))
	row("dsh sessions list --all-workspaces --limit 50", ppCPU(w.ListAll, w.ListAllCPU), "", "", "")
	row("dsh index status", ppCPU(w.Status, w.StatusCPU), "", "", "")
	row("ACP spawn → initialize response (corpus home)", pp(w.ACPInit), "", "", "")
	row(fmt.Sprintf("ACP session/list first page after initialize (%d sessions)", w.ACPListed), pp(w.ACPList), "", "", "")
	row(fmt.Sprintf("ACP session/load of a %d-event session after that", w.ACPLoaded), pp(w.ACPLoad), fmt.Sprintf("%d updates replayed", w.ACPReplay), "", "")
	w.Resume.row(row)
	row(fmt.Sprintf("search after another process appended 1,000 events to 10 sessions (%d found)", w.AppendHits), ppCPU(w.Appended, w.AppendCPU), "", "", "")
	row(fmt.Sprintf("  the same on copies of the 10 largest sessions (%s–%s logs, %d found)", fileSize(w.BigAppend.MinBytes), fileSize(w.BigAppend.MaxBytes), w.BigAppend.Hits), ppCPU(w.BigAppend.Wall, w.BigAppend.CPU), "", "", "")
	w.Rebuild.row(row)
}

func (r *report) printWholeTargets(row func(...string)) {
	w := r.whole
	// A figure that was not measured meets nothing.
	verdict := func(ok bool) string {
		if w.Runs == 0 {
			return "not measured"
		}
		return verdict(ok)
	}
	row()
	row("target (issue 15, whole process)", "measured", "", "verdict", "")
	for _, q := range w.Searches {
		limit := targetProcSearch
		if q.Name == "common word" {
			limit = targetProcCommonWord
		}
		row(fmt.Sprintf("search %s p50 ≤ %s", q.Name, ms(limit)), ms(q.DSH.P50), "", verdict(q.DSH.P50 <= limit), "")
		if q.Name == "rare id" || q.Name == "identifier" || q.Name == "phrase" {
			x, _ := ratio(q.RG.P50, q.DSH.P50)
			row(fmt.Sprintf("search %s ≥ 8× faster than rg -l -F", q.Name), fmt.Sprintf("%.1f×", x), "", verdict(!w.RGMissing && x >= targetProcRGRatio), "")
		}
	}
	row(fmt.Sprintf("search identifier, its first search p50 ≤ %s", ms(targetProcSearch)), ms(w.FirstIdent.DSH.P50), "", verdict(w.FirstIdent.DSH.P50 <= targetProcSearch), "")
	row("dsh sessions list one workspace ≤ 40 ms", ms(w.List.P50), "", verdict(w.List.P50 <= targetProcList), "")
	row("dsh sessions list --all-workspaces --limit 50 ≤ 60 ms", ms(w.ListAll.P50), "", verdict(w.ListAll.P50 <= targetProcListAll), "")
	row("dsh index status ≤ 20 ms", ms(w.Status.P50), "", verdict(w.Status.P50 <= targetProcStatus), "")
	row("ACP initialize ≤ 12 ms from spawn", ms(w.ACPInit.P50), "", verdict(w.ACPInit.P50 <= targetACPInit), "")
	row("ACP session/list first page ≤ 10 ms after initialize", ms(w.ACPList.P50), "", verdict(w.ACPList.P50 <= targetACPList), "")
	row(fmt.Sprintf("ACP session/load of a %d-event session ≤ 50 ms", w.ACPLoaded), ms(w.ACPLoad.P50), "", verdict(w.ACPLoad.P50 <= targetACPLoad), "")
	w.Resume.target(row, verdict)
	row("search after 1,000 appended events ≤ 60 ms and finds them", fmt.Sprintf("%s, %d of 10 found", ms(w.Appended.P50), w.AppendHits), "", verdict(w.Appended.P50 <= targetAppended && w.AppendHits == 10), "")
	row("  the same on copies of the 10 largest sessions", fmt.Sprintf("%s, %d of 10 found", ms(w.BigAppend.Wall.P50), w.BigAppend.Hits), "", verdict(w.BigAppend.Wall.P50 <= targetAppended && w.BigAppend.Hits == 10), "")
	row("search process peak RSS ≤ 80 MB", mb(w.SearchRSS), "", verdict(w.SearchRSS <= targetSearchRSS), "")
	w.Rebuild.targets(row, verdict)
}

// ppCPU is pp with the CPU time's p50 beside it.
func ppCPU(wall, cpu latency) string { return pp(wall) + " · CPU p50 " + ms(cpu.P50) }

// printWholeOnly is the table of a -whole-only run.
func (r *report) printWholeOnly(w io.Writer) {
	c := r.corpus
	fmt.Fprintf(w, "dsh bench · preset %s: %s sessions, %s events, %s of JSONL; index built in %.1f s (%s events/s, %s)\n",
		r.preset, thousands(int64(c.Sessions)), thousands(int64(c.Events)), mb(c.Bytes),
		r.build.Seconds, thousands(int64(float64(r.build.Events)/r.build.Seconds)), mb(r.build.SizeBytes))
	fmt.Fprintln(w, r.machine)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t") }
	r.printWhole(row)
	r.printWholeTargets(row)
	tw.Flush()
}
