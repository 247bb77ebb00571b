package outputdir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// put writes size bytes to root/rel, last modified age before now.
func put(t *testing.T, root, rel string, size int, now time.Time, age time.Duration) string {
	t.Helper()
	path := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, now.Add(-age), now.Add(-age)); err != nil {
		t.Fatal(err)
	}
	return path
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

const (
	dirA = "session-0123456789ab"
	dirB = "session-ba9876543210"
)

func TestPruneRemovesFilesOlderThanTheAge(t *testing.T) {
	root, now := t.TempDir(), time.Now()
	old := put(t, root, dirA+"/bash-1.log", 10, now, 8*24*time.Hour)
	fresh := put(t, root, dirA+"/bash-2.log", 10, now, time.Hour)
	otherOld := put(t, root, dirB+"/abc-result.txt", 10, now, 30*24*time.Hour)
	p, err := Retention{MaxAge: 7 * 24 * time.Hour}.Prune(root, now)
	if err != nil {
		t.Fatal(err)
	}
	if exists(old) || exists(otherOld) || !exists(fresh) {
		t.Errorf("old %v, other old %v, fresh %v: want only the fresh file kept", exists(old), exists(otherOld), exists(fresh))
	}
	if p != (Pruned{Files: 2, Bytes: 20, Kept: 10}) {
		t.Errorf("Pruned = %+v", p)
	}
}

func TestPruneRemovesTheOldestUntilTheRestFit(t *testing.T) {
	root, now := t.TempDir(), time.Now()
	var paths []string
	for i := range 5 {
		// Spread over both directories; file i is i minutes old.
		dir := []string{dirA, dirB}[i%2]
		paths = append(paths, put(t, root, dir+"/f"+strconv.Itoa(i), 100, now, time.Duration(i)*time.Minute))
	}
	p, err := Retention{MaxAge: 7 * 24 * time.Hour, MaxBytes: 250}.Prune(root, now)
	if err != nil {
		t.Fatal(err)
	}
	for i, path := range paths {
		if want := i < 2; exists(path) != want {
			t.Errorf("file %d minutes old: exists %v, want %v", i, exists(path), want)
		}
	}
	if p != (Pruned{Files: 3, Bytes: 300, Kept: 200}) {
		t.Errorf("Pruned = %+v", p)
	}
}

func TestPruneTouchesOnlyFilesInSessionDirectories(t *testing.T) {
	root, now := t.TempDir(), time.Now()
	outside := put(t, t.TempDir(), "precious", 10, now, 365*24*time.Hour)
	ancient := 365 * 24 * time.Hour
	keep := []string{
		put(t, root, "top-level-file", 10, now, ancient),
		put(t, root, "notes/bash-1.log", 10, now, ancient),
		put(t, root, "session-XYZ/bash-1.log", 10, now, ancient),
		put(t, root, dirA+"/nested/deeper.log", 10, now, ancient),
		outside,
	}
	link := filepath.Join(root, dirA, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	// A session directory that is a link to somewhere else is not entered.
	if err := os.Symlink(filepath.Dir(outside), filepath.Join(root, dirB)); err != nil {
		t.Fatal(err)
	}
	if _, err := (Retention{MaxAge: time.Hour, MaxBytes: 1}).Prune(root, now); err != nil {
		t.Fatal(err)
	}
	for _, path := range append(keep, link) {
		if !exists(path) {
			t.Errorf("%s was removed", path)
		}
	}
}

func TestPruneRemovesOnlyOldEmptySessionDirectories(t *testing.T) {
	root, now := t.TempDir(), time.Now()
	for _, d := range []string{dirA, dirB} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chtimes(filepath.Join(root, dirA), now.Add(-2*time.Hour), now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	held := put(t, root, "session-aaaaaaaaaaaa/bash-1.log", 10, now, time.Minute)
	if err := os.Chtimes(filepath.Dir(held), now.Add(-2*time.Hour), now.Add(-2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := (Retention{MaxAge: 24 * time.Hour}).Prune(root, now); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(root, dirA)) {
		t.Error("an empty session directory two hours old was kept")
	}
	if !exists(filepath.Join(root, dirB)) {
		t.Error("a fresh empty session directory was removed: its writer may be about to use it")
	}
	if !exists(held) {
		t.Error("a directory holding a file was removed")
	}
}

func TestPruneOfAMissingRootIsNothing(t *testing.T) {
	p, err := Retention{MaxAge: time.Hour}.Prune(filepath.Join(t.TempDir(), "none"), time.Now())
	if err != nil || p != (Pruned{}) {
		t.Errorf("Prune = %+v, %v", p, err)
	}
}

func TestDefaultIsOnePrivateDirectoryPerUser(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	a, err := Default("bash-output")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Default("bash-output")
	if err != nil || a != b {
		t.Fatalf("second Default = %q, %v; want %q again", b, err, a)
	}
	private := filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()))
	if a != filepath.Join(private, "bash-output") {
		t.Errorf("Default = %q", a)
	}
	for _, d := range []string{private, a} {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a 0700 directory", d, fi.Mode(), err)
		}
	}
}

func TestDefaultClosesAnOpenPrivateDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	private := filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(private, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(private, 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Default("spill"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(private); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestDefaultRefusesALinkAndBadNames(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	if err := os.Symlink(t.TempDir(), filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()))); err != nil {
		t.Fatal(err)
	}
	if _, err := Default("spill"); err == nil || !strings.Contains(err.Error(), "not a plain directory") {
		t.Errorf("Default through a planted link = %v", err)
	}
	for _, name := range []string{"", ".", "..", "a/b"} {
		if _, err := Default(name); err == nil {
			t.Errorf("Default(%q) succeeded", name)
		}
	}
}
