package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/store"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// goodSessions is how many readable sessions sit beside the broken logs
// (issue 14's target: 1,000).
const goodSessions = 1000

// brokenHome is a dsh home whose workspace holds goodSessions readable
// logs and one of each broken kind: a corrupt body line, a corrupt header,
// an event over the store's limit, and a directory, a FIFO and a socket
// where a session.jsonl belongs.
func brokenHome(t *testing.T) hermetic {
	t.Helper()
	h := newHermetic(t)
	ws := filepath.Join(h.config(t, "").Value("sessions.dir").(string), store.WorkspaceSlug(&h.cwd))
	logAt := func(id string) string {
		dir := filepath.Join(ws, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		return filepath.Join(dir, "session.jsonl")
	}
	header := func(id string, created int) string {
		cwd, _ := json.Marshal(h.cwd)
		return fmt.Sprintf(`{"type":"session","version":0,"id":%q,"createdAt":%d,"cwd":%s,"delegationDepth":0}`+"\n", id, 1_700_000_000_000+created, cwd)
	}
	message := func(seq int, text string) string {
		return fmt.Sprintf(`{"type":"user/message","seq":%d,"time":1700000000000,"data":{"content":[{"type":"text","text":%q}],"source":{"kind":"user"},"role":"user","id":"m%d"},"surfaceOp":"append"}`+"\n", seq, text, seq)
	}
	write := func(id, content string) {
		if err := os.WriteFile(logAt(id), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for i := range goodSessions {
		id := fmt.Sprintf("good-%04d", i)
		write(id, header(id, i)+message(0, fmt.Sprintf("needle in good log token%d", i)))
	}
	write("bad-body", header("bad-body", goodSessions)+message(0, "needle before the damage")+"{not json\n")
	write("bad-header", `{"type":"session","id":`+"\n"+message(0, "needle"))
	write("bad-big", header("bad-big", goodSessions+1)+message(0, "needle")+
		`{"type":"x","seq":1,"time":1,"data":"`+strings.Repeat("needle ", store.MaxEventBytes/7+1)+`"}`+"\n")
	if err := os.Mkdir(logAt("bad-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(logAt("bad-fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	short, err := os.MkdirTemp("", "sock")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	l, err := net.Listen("unix", filepath.Join(short, "s"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if err := os.Rename(filepath.Join(short, "s"), logAt("bad-socket")); err != nil {
		t.Fatal(err)
	}
	return h
}

// dshGuarded runs the built dsh in h; a command that hangs is killed by the
// guard and fails the test instead of the whole run.
func dshGuarded(t *testing.T, h hermetic, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, dshBinary(t), append(args, "--home", h.home)...)
	cmd.Dir = h.cwd
	cmd.Env = []string{"HOME=" + h.root, "PATH=" + os.Getenv("PATH")}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("dsh %s hung beside broken logs", strings.Join(args, " "))
	}
	return out.String(), errb.String(), err
}

func TestBrokenLogsBesideManyGoodOnesNeverHangOrFailTheOthers(t *testing.T) {
	h := brokenHome(t)

	t.Run("sessions list", func(t *testing.T) {
		out, stderr, err := dshGuarded(t, h, "sessions", "list", "--json", "--limit", "0")
		if err != nil {
			t.Fatalf("exit %v; stderr:\n%.2000s", err, stderr)
		}
		var rows []struct {
			ID    string `json:"id"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("not the JSON list: %v\n%.500s", err, out)
		}
		good, unreadable := 0, map[string]string{}
		for _, r := range rows {
			switch {
			case strings.HasPrefix(r.ID, "good-") && r.Error == "":
				good++
			case r.Error != "":
				unreadable[r.ID] = r.Error
			}
		}
		if good != goodSessions {
			t.Errorf("list shows %d readable good sessions, want %d", good, goodSessions)
		}
		for _, id := range []string{"bad-body", "bad-big"} {
			if unreadable[id] == "" {
				t.Errorf("%s is not listed as unreadable (%v)", id, unreadable)
			}
		}
		for _, kind := range []string{"directory", "FIFO", "socket"} {
			if !strings.Contains(stderr, "is a "+kind+", not a regular file") {
				t.Errorf("no warning names the %s:\n%.2000s", kind, stderr)
			}
		}
	})

	t.Run("sessions show", func(t *testing.T) {
		out, stderr, err := dshGuarded(t, h, "sessions", "show", "good-0500")
		if err != nil || !strings.Contains(out, "token500") {
			t.Errorf("show of a good session: exit %v\n%.500s\n%.2000s", err, out, stderr)
		}
		_, stderr, err = dshGuarded(t, h, "sessions", "show", "bad-body")
		if err == nil || !strings.Contains(stderr, "corrupt at line 3") {
			t.Errorf("show of the corrupt log: exit %v, stderr %.500s", err, stderr)
		}
	})

	t.Run("index rebuild", func(t *testing.T) {
		out, stderr, err := dshGuarded(t, h, "index", "rebuild")
		if err != nil {
			t.Fatalf("exit %v; stderr:\n%.2000s", err, stderr)
		}
		if n := strings.Count(stderr, "skipping an unreadable session log"); n != 2 {
			t.Errorf("rebuild warned %d times about unreadable bodies, want 2 (bad-body, bad-big):\n%.3000s", n, stderr)
		}
		if !strings.Contains(out, "Rebuilt") {
			t.Errorf("rebuild output: %q", out)
		}
	})

	t.Run("sessions search", func(t *testing.T) {
		for i := range 2 {
			out, stderr, err := dshGuarded(t, h, "sessions", "search", "--json", "token777")
			if err != nil {
				t.Fatalf("search %d: exit %v; stderr:\n%.2000s", i, err, stderr)
			}
			if !strings.Contains(out, `"good-0777"`) || strings.Contains(out, `"bad-`) {
				t.Errorf("search %d for token777: %.500s", i, out)
			}
			out, stderr, err = dshGuarded(t, h, "sessions", "search", "--json", "--limit", "100", "needle")
			if err != nil {
				t.Fatalf("search %d: exit %v; stderr:\n%.2000s", i, err, stderr)
			}
			if n := strings.Count(out, `"good-`); n < 100 || strings.Contains(out, `"bad-`) {
				t.Errorf("search %d for needle: %d good hits, or a broken log: %.500s", i, n, out)
			}
		}
	})

	t.Run("acp session/list", func(t *testing.T) {
		srv := fakellm.New()
		defer srv.Close()
		c := startACP(t, h, 1<<30, srv.URL)
		seen := 0
		var cursor *string
		for range goodSessions {
			params := map[string]any{"cwd": h.cwd}
			if cursor != nil {
				params["cursor"] = *cursor
			}
			res, e := c.call("session/list", params)
			if e != nil {
				t.Fatalf("session/list: %+v", e)
			}
			var page struct {
				Sessions []struct {
					SessionID string `json:"sessionId"`
				} `json:"sessions"`
				NextCursor *string `json:"nextCursor"`
			}
			if err := json.Unmarshal(res, &page); err != nil {
				t.Fatal(err)
			}
			for _, s := range page.Sessions {
				if strings.HasPrefix(s.SessionID, "good-") {
					seen++
				}
			}
			if cursor = page.NextCursor; cursor == nil {
				break
			}
		}
		if seen != goodSessions {
			t.Errorf("session/list pages show %d good sessions, want %d", seen, goodSessions)
		}
		c.close()
	})
}
