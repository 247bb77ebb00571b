package spill

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/outputdir"
)

// fixedNonce makes the store's random file prefix predictable, so a test
// can plant something at the exact path a save will use.
func fixedNonce() *bytes.Reader { return bytes.NewReader(bytes.Repeat([]byte{0xab}, 6*16)) }

const nonceHex = "abababababab"

func sessionDir(root, id string) string {
	sum := sha256.Sum256([]byte(id))
	return filepath.Join(root, "session-"+hex.EncodeToString(sum[:])[:12])
}

func newStore(t *testing.T, opts LocalOptions) *LocalStore {
	t.Helper()
	s, err := NewLocalStore(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func save(s *LocalStore, id, suggested, content string) (Ref, error) {
	return s.SaveText(context.Background(), SaveRequest{SessionID: id, ToolName: "bash", CallID: "c1", Label: "result", SuggestedName: suggested, Content: content})
}

func TestLocalStoreWritesPrivateFilesUnderTheSessionDirectory(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, LocalOptions{Root: root})
	content := "full text é 😀\n"
	ref, err := save(s, "sess-1", "bash.txt", content)
	if err != nil {
		t.Fatal(err)
	}
	dir := sessionDir(root, "sess-1")
	if filepath.Dir(ref.Locator) != dir || !filepath.IsAbs(ref.Locator) {
		t.Fatalf("locator %s, want a file in %s", ref.Locator, dir)
	}
	base := filepath.Base(ref.Locator)
	if len(base) != len("0123456789ab-bash.txt") || !strings.HasSuffix(base, "-bash.txt") {
		t.Errorf("file name %q, want <12 hex>-bash.txt", base)
	}
	if _, err := hex.DecodeString(base[:12]); err != nil {
		t.Errorf("file name prefix %q is not hex", base[:12])
	}
	if ref.Bytes != len(content) || ref.RetrievalHint != "Use read with offset/limit, or grep this path to search within it." {
		t.Errorf("ref = %+v", ref)
	}
	got, err := os.ReadFile(ref.Locator)
	if err != nil || string(got) != content {
		t.Fatalf("file holds %q (%v), want the content verbatim", got, err)
	}
	assertMode(t, dir, fs.ModeDir|0o700)
	assertMode(t, ref.Locator, 0o600)

	again, err := save(s, "sess-1", "bash.txt", "second")
	if err != nil {
		t.Fatal(err)
	}
	if again.Locator == ref.Locator || filepath.Dir(again.Locator) != dir {
		t.Errorf("second save %s, first %s: want a new file in the same directory", again.Locator, ref.Locator)
	}
	other, err := save(s, "sess-2", "bash.txt", "x")
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(other.Locator) != sessionDir(root, "sess-2") {
		t.Errorf("another session's file went to %s", other.Locator)
	}
}

// assertMode checks the permission bits a store created; umask can only
// remove bits, so group and other bits must be absent whatever it is.
func assertMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Type() != want.Type() || fi.Mode().Perm()&0o077 != 0 || fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("%s has mode %v, want %v", path, fi.Mode(), want)
	}
}

func TestLocalStoreCreatesAPrivateTemporaryRootLazily(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := newStore(t, LocalOptions{})
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Fatalf("the store touched the disk before the first save: %v", entries)
	}
	a, err := save(s, "s", "a.txt", "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := save(s, "s", "b.txt", "b")
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(tmp)
	private := "dsh-" + strconv.Itoa(os.Getuid())
	if len(entries) != 1 || entries[0].Name() != private {
		t.Fatalf("temp dir holds %v, want only the user's private %s", entries, private)
	}
	root := filepath.Join(tmp, private, "spill")
	assertMode(t, root, fs.ModeDir|0o700)
	if filepath.Dir(a.Locator) != sessionDir(root, "s") || filepath.Dir(b.Locator) != filepath.Dir(a.Locator) {
		t.Errorf("locators %s, %s are not in %s", a.Locator, b.Locator, sessionDir(root, "s"))
	}
}

func TestLocalStoreResolvesARelativeRootAndCreatesIt(t *testing.T) {
	t.Chdir(t.TempDir())
	s := newStore(t, LocalOptions{Root: filepath.Join("nested", "spill")})
	ref, err := save(s, "s", "x.txt", "x")
	if err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if want := sessionDir(filepath.Join(wd, "nested", "spill"), "s"); filepath.Dir(ref.Locator) != want {
		t.Errorf("locator %s, want it under %s", ref.Locator, want)
	}
	assertMode(t, filepath.Join(wd, "nested", "spill"), fs.ModeDir|0o700)
}

func TestLocalStoreRefusesExistingPathsAndSymlinks(t *testing.T) {
	cases := []struct {
		name  string
		plant func(t *testing.T, root, outside string)
	}{
		{"file at the target path", func(t *testing.T, root, _ string) {
			dir := sessionDir(root, "s")
			mustMkdir(t, dir)
			mustWrite(t, filepath.Join(dir, nonceHex+"-bash.txt"), "existing")
		}},
		{"symlink at the target path", func(t *testing.T, root, outside string) {
			dir := sessionDir(root, "s")
			mustMkdir(t, dir)
			mustSymlink(t, filepath.Join(outside, "victim"), filepath.Join(dir, nonceHex+"-bash.txt"))
		}},
		{"dangling symlink at the target path", func(t *testing.T, root, outside string) {
			dir := sessionDir(root, "s")
			mustMkdir(t, dir)
			mustSymlink(t, filepath.Join(outside, "created-through-link"), filepath.Join(dir, nonceHex+"-bash.txt"))
		}},
		{"symlink as the session directory", func(t *testing.T, root, outside string) {
			mustSymlink(t, outside, sessionDir(root, "s"))
		}},
		{"file as the session directory", func(t *testing.T, root, _ string) {
			mustWrite(t, sessionDir(root, "s"), "not a directory")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root, outside := t.TempDir(), t.TempDir()
			mustWrite(t, filepath.Join(outside, "victim"), "untouched")
			tc.plant(t, root, outside)
			s := newStore(t, LocalOptions{Root: root, Random: fixedNonce()})
			if ref, err := save(s, "s", "bash.txt", "payload"); err == nil {
				t.Fatalf("save succeeded at %s", ref.Locator)
			}
			assertOutsideUntouched(t, outside)
		})
	}
}

func assertOutsideUntouched(t *testing.T, outside string) {
	t.Helper()
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "victim" {
		t.Errorf("outside directory now holds %v", entries)
	}
	if got, _ := os.ReadFile(filepath.Join(outside, "victim")); string(got) != "untouched" {
		t.Errorf("victim file now holds %q", got)
	}
}

func TestLocalStoreKeepsHostileSuggestedNamesInsideTheRoot(t *testing.T) {
	parent := t.TempDir()
	root := filepath.Join(parent, "root")
	outside := filepath.Join(parent, "outside")
	mustMkdir(t, outside)
	mustWrite(t, filepath.Join(outside, "victim"), "untouched")
	s := newStore(t, LocalOptions{Root: root})
	names := []string{
		"../outside/victim", "../../outside/victim", "/etc/passwd", "a/b", "a\x00b", "~", ".", "..", "",
		"~002E~002E", "..\\outside", "日本語.txt", "😀", "\xff\xfe", strings.Repeat("../", 20) + "x",
	}
	seen := map[string]string{}
	for _, n := range names {
		ref, err := save(s, "../../outside", n, "payload for "+n)
		if err != nil {
			t.Fatalf("suggested name %q: %v", n, err)
		}
		if filepath.Dir(ref.Locator) != sessionDir(root, "../../outside") {
			t.Errorf("suggested name %q wrote to %s", n, ref.Locator)
		}
		enc := filepath.Base(ref.Locator)[len(nonceHex)+1:]
		if prev, dup := seen[enc]; dup {
			t.Errorf("names %q and %q share the encoding %q", prev, n, enc)
		}
		seen[enc] = n
		if got := decodeSafeName(t, enc); got != n {
			t.Errorf("encoding %q of %q decodes to %q", enc, n, got)
		}
	}
	assertOutsideUntouched(t, outside)
	// Everything the store wrote is one directory level under the root.
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if depth := len(strings.Split(rel, string(filepath.Separator))); rel != "." && depth > 2 {
			t.Errorf("unexpected nested path %s", rel)
		}
		if d.Type()&fs.ModeSymlink != 0 {
			t.Errorf("store created a symlink %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestLocalStoreRejectsCancelledSavesAndMissingOwners(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, LocalOptions{Root: root})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SaveText(ctx, SaveRequest{SessionID: "s", SuggestedName: "x.txt", Content: "x"}); err == nil {
		t.Error("a cancelled save succeeded")
	}
	if _, err := save(s, "", "x.txt", "x"); err == nil {
		t.Error("a save without a session id succeeded")
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("failed saves left %v", entries)
	}
}

func mustMkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

func TestLocalStoreRemovesOldResultsBeforeSaving(t *testing.T) {
	root := t.TempDir()
	s := newStore(t, LocalOptions{Root: root, Retention: outputdir.Retention{MaxAge: 24 * time.Hour, MaxBytes: 10}})
	old, err := save(s, "s", "old.txt", "old")
	if err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(old.Locator, long, long); err != nil {
		t.Fatal(err)
	}
	kept, err := save(s, "s", "kept.txt", "0123456789")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old.Locator); !os.IsNotExist(err) {
		t.Errorf("a two-day-old result survived keep 1 day: %v", err)
	}
	// Over the size, the oldest goes at the next save.
	minute := time.Now().Add(-time.Minute)
	if err := os.Chtimes(kept.Locator, minute, minute); err != nil {
		t.Fatal(err)
	}
	newer, err := save(s, "s", "new.txt", "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept.Locator); err != nil {
		t.Fatalf("10 bytes fit keep_total_bytes 10, yet: %v", err)
	}
	if _, err := save(s, "s", "last.txt", "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(kept.Locator); !os.IsNotExist(err) {
		t.Errorf("11 bytes kept under keep_total_bytes 10: the oldest is still there (%v)", err)
	}
	if _, err := os.Stat(newer.Locator); err != nil {
		t.Errorf("a newer result was removed: %v", err)
	}
}

// TestTrustGivesAResumedSessionItsOwnDirectoryInTheSharedRoot: a session
// that spilled in one process and is resumed in another, with the default
// (shared, private) root, is trusted on its own directory there before it
// spills anything again, and on nothing else.
func TestTrustGivesAResumedSessionItsOwnDirectoryInTheSharedRoot(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	earlier := newStore(t, LocalOptions{})
	ref, err := save(earlier, "resumed", "bash.txt", "spilled before")
	if err != nil {
		t.Fatal(err)
	}

	trusted := map[string][]string{}
	withdrawn := 0
	later := newStore(t, LocalOptions{OnSessionDir: func(id, dir string) func() {
		trusted[id] = append(trusted[id], dir)
		return func() { withdrawn++ }
	}})
	later.Trust("resumed")
	later.Trust("resumed")
	later.Trust("other")
	if got := trusted["resumed"]; len(got) != 1 || got[0] != filepath.Dir(ref.Locator) {
		t.Errorf("resumed session trusted on %v, want only %s", got, filepath.Dir(ref.Locator))
	}
	root := filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()), "spill")
	if got := trusted["other"]; len(got) != 1 || got[0] != sessionDir(root, "other") {
		t.Errorf("another session trusted on %v, want only its own %s", got, sessionDir(root, "other"))
	}
	later.Forget("resumed")
	later.Close()
	if withdrawn != 2 {
		t.Errorf("%d trusts withdrawn, want 2", withdrawn)
	}
}

func TestTrustRefusesASharedRootAnotherCanRedirect(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.Symlink(t.TempDir(), filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()))); err != nil {
		t.Fatal(err)
	}
	s := newStore(t, LocalOptions{OnSessionDir: func(id, dir string) func() {
		t.Errorf("trusted %s through a symbolic link", dir)
		return nil
	}})
	s.Trust("s")
}
