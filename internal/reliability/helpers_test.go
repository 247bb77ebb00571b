package reliability

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/store"
)

// hermetic is a dsh home and a workspace in a fresh temporary directory.
type hermetic struct {
	root, home, cwd string
}

func newHermetic(t testing.TB) hermetic {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	h := hermetic{root: root, home: filepath.Join(root, "home"), cwd: filepath.Join(root, "work")}
	for _, d := range []string{h.home, h.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// config loads the layered config for h with no environment and extra
// --set overrides.
func (h hermetic) config(t testing.TB, profile string, set ...string) *config.Config {
	t.Helper()
	cfg, err := loadConfig(h.home, h.cwd, profile, set...)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func loadConfig(home, cwd, profile string, set ...string) (*config.Config, error) {
	return config.Load(config.Options{
		Profile: profile, Home: home, Cwd: cwd, Set: set,
		Env:      func(string) (string, bool) { return "", false },
		Sections: compositions.ConfigSections(),
	})
}

// runtime composes kind on cfg and closes it when the test ends.
func newRuntime(t testing.TB, kind compositions.Kind, cfg *config.Config) *compositions.Runtime {
	t.Helper()
	rt, err := compositions.New(context.Background(), compositions.Options{Config: cfg, Kind: kind, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	})
	return rt
}

// docRef names one event of one session.
type docRef struct {
	Session string
	Seq     int
}

func (d docRef) String() string { return fmt.Sprintf("%s#%d", d.Session, d.Seq) }

// truth is what the logs on disk literally say: every searchable document
// (the session-query extraction of each event) of every session.
type truth struct {
	docs  []sessionquery.Document
	paths map[string]string // session id -> log path
}

// readTruth reads every log under the sessions root.
func readTruth(ctx context.Context, root string) (truth, error) {
	st := store.New(root, store.Options{Log: slog.New(slog.DiscardHandler)})
	entries, err := st.List(ctx)
	if err != nil {
		return truth{}, err
	}
	tr := truth{paths: map[string]string{}}
	for _, e := range entries {
		_, events, err := st.Inspect(ctx, e.Header.ID)
		if err != nil {
			return truth{}, err
		}
		docs, err := sessionquery.BuildDocuments(e.Header.ID, events)
		if err != nil {
			return truth{}, err
		}
		tr.docs = append(tr.docs, docs...)
		tr.paths[e.Header.ID] = e.Path
	}
	return tr, nil
}

// containing returns the documents whose text holds token, which the
// tests make a unique word, so containment is what FTS5 matches.
func (tr truth) containing(token string) []docRef {
	var out []docRef
	for _, d := range tr.docs {
		if strings.Contains(d.Text, token) {
			out = append(out, docRef{d.SessionID, d.Seq})
		}
	}
	return out
}

// sessionsWith returns the ids of the sessions holding token, sorted.
func (tr truth) sessionsWith(token string) []string {
	var ids []string
	for _, d := range tr.containing(token) {
		if !slices.Contains(ids, d.Session) {
			ids = append(ids, d.Session)
		}
	}
	slices.Sort(ids)
	return ids
}

// rawLine returns line seq+2 of a log (line 1 is the header): the bytes a
// hit must literally come from.
func rawLine(path string, seq int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for i := 0; sc.Scan(); i++ {
		if i == seq+1 {
			return sc.Text(), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no event %d", path, seq)
}

// queryErr asserts that err is a typed session-query error and returns
// it.
func queryErr(t testing.TB, err error) *sessionquery.Error {
	t.Helper()
	var qe *sessionquery.Error
	if !errors.As(err, &qe) {
		t.Fatalf("error %v (%T) is not a *sessionquery.Error", err, err)
	}
	return qe
}

func sessionIDs(p sessionquery.SessionSearchPage) []string {
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.Header.ID
	}
	slices.Sort(ids)
	return ids
}

func ptr[T any](v T) *T { return &v }

// userText is the text of a user message event.
func userMessage(text, id string) session.Message {
	return session.Message{Role: session.RoleUser, Content: []session.ContentBlock{session.TextBlock(text)}, Source: session.UserSource, ID: id}
}
