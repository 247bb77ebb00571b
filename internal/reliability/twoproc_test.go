package reliability

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// durationEnv bounds the two-process test: 3s by default (CI), 30s for the
// long form of issue 9 (DSH_RELIABILITY_DURATION=30s).
const durationEnv = "DSH_RELIABILITY_DURATION"

func init() { helpers["writer"] = writerHelper }

// writerSummary is what one writer process reports.
type writerSummary struct {
	Tag         string   `json:"tag"`
	Tokens      int      `json:"tokens"`
	Sessions    int      `json:"sessions"`
	Searches    int      `json:"searches"`
	PeerChecks  int      `json:"peerChecks"`
	StalePages  int      `json:"stalePages"`
	Failures    []string `json:"failures"`
	OverlapSeen bool     `json:"overlapSeen"`
}

// TestTwoProcessesWriteAndSearchOneHomeWithoutLostOrDuplicatedHits runs
// two OS processes, each a TUI runtime on one $DSH_HOME, writing their own
// sessions and searching both their own and the other's for a bounded
// time. Every token found on disk before a search is found by it exactly
// once, at the event that holds it; paging over every session never
// repeats one. Afterwards a third runtime finds every token once.
func TestTwoProcessesWriteAndSearchOneHomeWithoutLostOrDuplicatedHits(t *testing.T) {
	dur := 3 * time.Second
	if v := os.Getenv(durationEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s: %v", durationEnv, err)
		}
		dur = d
	}
	h := newHermetic(t)
	type proc struct {
		tag string
		in  io.WriteCloser
		out *bufio.Reader
		cmd *exec.Cmd
	}
	var procs []proc
	for _, tags := range [][2]string{{"alpha", "bravo"}, {"bravo", "alpha"}} {
		cmd := helperCmd(t, "writer", "DSH_REL_HOME="+h.home, "DSH_REL_CWD="+h.cwd, "DSH_REL_TAG="+tags[0], "DSH_REL_PEER="+tags[1], "DSH_REL_DURATION="+dur.String())
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		procs = append(procs, proc{tag: tags[0], in: in, out: bufio.NewReader(out), cmd: cmd})
	}
	// Both runtimes are up before either starts writing.
	for _, p := range procs {
		if line, err := p.out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("%s: %q, %v", p.tag, line, err)
		}
	}
	for _, p := range procs {
		if _, err := io.WriteString(p.in, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	var sums []writerSummary
	for _, p := range procs {
		line, err := p.out.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", p.tag, err)
		}
		var s writerSummary
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			t.Fatalf("%s: %q: %v", p.tag, line, err)
		}
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("%s exited: %v", p.tag, err)
		}
		for _, f := range s.Failures {
			t.Errorf("%s: %s", s.Tag, f)
		}
		if s.Tokens == 0 || s.PeerChecks == 0 || !s.OverlapSeen {
			t.Errorf("%s did too little to prove anything: %+v", s.Tag, s)
		}
		t.Logf("%s: %d tokens in %d sessions, %d searches, %d checks of the other's tokens, %d stale pages", s.Tag, s.Tokens, s.Sessions, s.Searches, s.PeerChecks, s.StalePages)
		sums = append(sums, s)
	}
	// A third process sees everything exactly once.
	rt := newRuntime(t, compositions.TUI, h.config(t, ""))
	ctx := context.Background()
	tr, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sums {
		for i := range s.Tokens {
			token := fmt.Sprintf("%stok%05d", s.Tag, i)
			if msg := findOnce(ctx, rt.Query, tr, token); msg != "" {
				t.Errorf("after both exited: %s", msg)
			}
		}
	}
}

// findOnce searches token and reports how the answer differs from the one
// document on disk that holds it ("" when it does not).
func findOnce(ctx context.Context, q *sessionquery.Service, tr truth, token string) string {
	want := tr.containing(token)
	if len(want) != 1 {
		return fmt.Sprintf("%q is on disk %d times: %v", token, len(want), want)
	}
	page, err := q.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: token})
	if err != nil {
		return fmt.Sprintf("search %q: %v", token, err)
	}
	if len(page.Items) != 1 || page.Items[0].Header.ID != want[0].Session || page.Items[0].BestMatch.Seq != want[0].Seq {
		var got []string
		for _, it := range page.Items {
			got = append(got, docRef{it.Header.ID, it.BestMatch.Seq}.String())
		}
		return fmt.Sprintf("search %q found %v, the logs hold it at %s", token, got, want[0])
	}
	events, err := q.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: want[0].Session, Query: token})
	if err != nil {
		return fmt.Sprintf("event search %q: %v", token, err)
	}
	if len(events.Items) != 1 || events.Items[0].Seq != want[0].Seq {
		return fmt.Sprintf("event search %q found %+v, want seq %d", token, events.Items, want[0].Seq)
	}
	return ""
}

// writerHelper is one process of the test: a TUI runtime that writes
// sessions of a dozen tokens each through live sessions (as the agent
// does) and checks its searches against the logs on disk.
func writerHelper() error {
	home, cwd, tag, peer := os.Getenv("DSH_REL_HOME"), os.Getenv("DSH_REL_CWD"), os.Getenv("DSH_REL_TAG"), os.Getenv("DSH_REL_PEER")
	dur, err := time.ParseDuration(os.Getenv("DSH_REL_DURATION"))
	if err != nil {
		return err
	}
	cfg, err := loadConfig(home, cwd, "")
	if err != nil {
		return err
	}
	ctx := context.Background()
	rt, err := compositions.New(ctx, compositions.Options{Config: cfg, Kind: compositions.TUI, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	defer rt.Close()
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return err
	}
	w := &writer{rt: rt, cwd: cwd, home: home, tag: tag, sum: writerSummary{Tag: tag, Failures: []string{}}, rnd: rand.New(rand.NewPCG(uint64(len(tag)), 7))}
	// Run at least until one check of the other's tokens, but give up
	// well after the deadline if the other process never writes.
	deadline, giveUp := time.Now().Add(dur), time.Now().Add(dur+time.Minute)
	for i := 0; (time.Now().Before(deadline) || w.sum.PeerChecks == 0) && time.Now().Before(giveUp); i++ {
		if err := w.step(ctx, fmt.Sprintf("%stok%05d", tag, i)); err != nil {
			return err
		}
		if i%4 == 3 {
			if err := w.checkPeer(ctx, peer); err != nil {
				return err
			}
		}
		if i%16 == 15 {
			if err := w.checkPaging(ctx); err != nil {
				return err
			}
		}
		if len(w.sum.Failures) > 20 {
			break
		}
	}
	if err := w.closeSession(); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(w.sum)
}

type writer struct {
	rt   *compositions.Runtime
	cwd  string
	home string
	tag  string
	sum  writerSummary
	rnd  *rand.Rand
	live *session.Live
	n    int // events in live
}

func (w *writer) failf(format string, args ...any) {
	w.sum.Failures = append(w.sum.Failures, fmt.Sprintf(format, args...))
}

func (w *writer) closeSession() error {
	if w.live == nil {
		return nil
	}
	rt := w.rt
	rt.Sessions.Detach(w.live)
	err := w.live.Close()
	w.live = nil
	return err
}

// step appends one user message holding token to the live session (a new
// one every 12 messages), makes it durable and finds it.
func (w *writer) step(ctx context.Context, token string) error {
	rt := w.rt
	if w.live == nil || w.n >= 12 {
		if err := w.closeSession(); err != nil {
			return err
		}
		h := session.Header{Version: session.FormatVersion, ID: uuid.NewString(), CreatedAt: time.Now().UnixMilli(), Cwd: &w.cwd}
		sink, err := rt.Store.Create(h, nil)
		if err != nil {
			return err
		}
		w.live = session.NewLive(h, nil, session.LiveOptions{Sink: sink})
		if err := rt.Sessions.Attach(w.live); err != nil {
			return err
		}
		w.n = 0
		w.sum.Sessions++
	}
	e, err := w.live.Append(session.TypeUserMessage, userMessage("entry "+token+" payload", uuid.NewString()))
	if err != nil {
		return err
	}
	if err := w.live.Flush(); err != nil {
		return err
	}
	w.n++
	w.sum.Tokens++
	if err := publishFlushed(w.home, w.tag, w.sum.Tokens); err != nil {
		return err
	}
	w.sum.Searches += 2
	page, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: token})
	if err != nil {
		w.failf("own %s: %v", token, err)
		return nil
	}
	if len(page.Items) != 1 || page.Items[0].Header.ID != w.live.ID() || page.Items[0].BestMatch.Seq != e.Seq {
		w.failf("own %s written at %s#%d, found %d sessions: %+v", token, w.live.ID(), e.Seq, len(page.Items), page.Items)
	}
	events, err := rt.Query.SearchEvents(ctx, sessionquery.EventSearchRequest{SessionID: w.live.ID(), Query: token})
	if err != nil {
		w.failf("own events %s: %v", token, err)
		return nil
	}
	if len(events.Items) != 1 || events.Items[0].Seq != e.Seq {
		w.failf("own events %s at seq %d: %+v", token, e.Seq, events.Items)
	}
	return nil
}

// checkPeer finds the peer's three newest flushed tokens and two older
// ones: each exactly once, where the log holds it. Only flushed tokens
// count: an appended line is in the file before the flush that makes it
// durable and announces it to other processes.
func (w *writer) checkPeer(ctx context.Context, peer string) error {
	rt := w.rt
	flushed, err := readFlushed(w.home, peer)
	if err != nil {
		return err
	}
	tr, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		return err
	}
	var tokens []string
	for i := range flushed {
		tokens = append(tokens, fmt.Sprintf("%stok%05d", peer, i))
	}
	if len(tokens) == 0 {
		return nil
	}
	w.sum.OverlapSeen = true
	slices.Sort(tokens)
	pick := tokens[max(0, len(tokens)-3):]
	for range 2 {
		pick = append(pick, tokens[w.rnd.IntN(len(tokens))])
	}
	for _, token := range pick {
		w.sum.Searches += 2
		w.sum.PeerChecks++
		if msg := findOnce(ctx, rt.Query, tr, token); msg != "" {
			w.failf("peer: %s; %s", msg, indexState(rt, tr.containing(token)))
		}
	}
	return nil
}

// indexState describes what the shared index holds about the sessions of
// refs, for a failure message.
func indexState(rt *compositions.Runtime, refs []docRef) string {
	db, err := sql.Open("sqlite", "file:"+rt.Config.Value("session_query.path").(string)+"?mode=ro")
	if err != nil {
		return err.Error()
	}
	defer db.Close()
	var b strings.Builder
	var cursor sql.NullInt64
	_ = db.QueryRow(`SELECT feed_cursor FROM search_state`).Scan(&cursor)
	fmt.Fprintf(&b, "index cursor %v", cursor.Int64)
	for _, r := range refs {
		var rev string
		var events int
		err := db.QueryRow(`SELECT revision, event_count FROM persisted_sessions WHERE session_id = ?`, r.Session).Scan(&rev, &events)
		var pending int
		_ = db.QueryRow(`SELECT count(*) FROM pending_sessions WHERE session_id = ?`, r.Session).Scan(&pending)
		e, serr := rt.Store.Stat(context.Background(), r.Session)
		fmt.Fprintf(&b, "; %s: indexed revision %q with %d events (%v), pending %d, log revision %q (%v)", r.Session, rev, events, err, pending, e.Revision, serr)
	}
	return b.String()
}

// publishFlushed records how many of tag's tokens are flushed, atomically.
func publishFlushed(home, tag string, n int) error {
	path := filepath.Join(home, tag+".flushed")
	if err := os.WriteFile(path+".tmp", []byte(strconv.Itoa(n)), 0o600); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

func readFlushed(home, tag string) (int, error) {
	b, err := os.ReadFile(filepath.Join(home, tag+".flushed"))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

// checkPaging pages through every session holding the common word: no
// session twice, and as many as the logs held before and after.
func (w *writer) checkPaging(ctx context.Context) error {
	rt := w.rt
	before, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		return err
	}
	var ids []string
	var cursor *string
	for {
		w.sum.Searches++
		page, err := rt.Query.SearchSessions(ctx, sessionquery.SessionSearchRequest{Query: "payload", Limit: ptr(7), Cursor: cursor})
		var qe *sessionquery.Error
		if errors.As(err, &qe) && qe.Code == sessionquery.CodeStaleCursor {
			// The corpus changed between pages (the other process
			// wrote): the documented answer; start over next time.
			w.sum.StalePages++
			return nil
		}
		if err != nil {
			w.failf("paging: %v", err)
			return nil
		}
		for _, it := range page.Items {
			ids = append(ids, it.Header.ID)
		}
		if page.NextCursor == nil {
			break
		}
		cursor = page.NextCursor
	}
	after, err := readTruth(ctx, rt.Store.Root())
	if err != nil {
		return err
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(ids) {
		w.failf("paging returned a session twice: %v", ids)
	}
	lo, hi := len(before.sessionsWith("payload")), len(after.sessionsWith("payload"))
	if len(ids) < lo || len(ids) > hi {
		w.failf("paging found %d sessions, the logs held %d before and %d after", len(ids), lo, hi)
	}
	return nil
}
