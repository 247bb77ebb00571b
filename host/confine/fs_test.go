package confine

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// world is a workspace and a directory outside it holding a secret.
type world struct{ ws, out string }

func newWorld(t *testing.T) world {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w := world{ws: filepath.Join(root, "ws"), out: filepath.Join(root, "out")}
	for _, d := range []string{w.ws + "/sub", w.out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, w.out+"/secret", "secret")
	write(t, w.ws+"/sub/file", "inside")
	for link, target := range map[string]string{
		"rel-out":  "../out",
		"abs-out":  w.out,
		"rel-in":   "sub",
		"abs-in":   w.ws + "/sub",
		"file-out": w.out + "/secret",
	} {
		if err := os.Symlink(target, filepath.Join(w.ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAll(t *testing.T, f *os.File) string {
	t.Helper()
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBeneathTheWorkspaceLinksStayInside(t *testing.T) {
	w := newWorld(t)
	fsys := Grants(Beneath(w.ws, w.ws)).FS()
	defer fsys.Close()
	for _, p := range []string{"sub/file", "rel-in/file", "abs-in/file", "sub/../sub/file"} {
		f, err := fsys.Open(w.ws + "/" + p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if got := readAll(t, f); got != "inside" {
			t.Errorf("%s read %q", p, got)
		}
	}
	for _, p := range []string{"rel-out/secret", "abs-out/secret", "file-out"} {
		f, err := fsys.Open(w.ws + "/" + p)
		if !errors.Is(err, ErrEscapes) {
			t.Errorf("%s: err %v, want ErrEscapes", p, err)
		}
		if f != nil {
			t.Errorf("%s opened %q", p, readAll(t, f))
		}
	}
	if _, err := fsys.Create(w.ws+"/rel-out/planted", 0o644); !errors.Is(err, ErrEscapes) {
		t.Errorf("create through a link out: %v", err)
	}
	if _, err := fsys.Create(w.ws+"/abs-out/new/dir/planted", 0o644); !errors.Is(err, ErrEscapes) {
		t.Errorf("create with parents through a link out: %v", err)
	}
	entries, err := os.ReadDir(w.out)
	if err != nil || len(entries) != 1 {
		t.Errorf("outside now holds %v (%v)", entries, err)
	}
	f, err := fsys.Create(w.ws+"/new/dir/created", 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := os.Stat(w.ws + "/new/dir/created"); err != nil {
		t.Error(err)
	}
	if _, err := fsys.Create(w.ws+"/new/dir/created", 0o644); !errors.Is(err, fs.ErrExist) {
		t.Errorf("second create: %v", err)
	}
	if _, err := fsys.Open(w.out + "/secret"); !errors.Is(err, ErrNotGranted) {
		t.Errorf("ungranted path: %v", err)
	}
}

func TestAHardLinkedFileInsideIsRefusedUnlessPinned(t *testing.T) {
	w := newWorld(t)
	if err := os.Link(w.out+"/secret", w.ws+"/linked"); err != nil {
		t.Fatal(err)
	}
	fsys := Grants(Beneath(w.ws, w.ws)).FS()
	defer fsys.Close()
	if _, err := fsys.Open(w.ws + "/linked"); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("hard-linked open: %v", err)
	}
	g, err := Pin(w.ws + "/linked")
	if err != nil {
		t.Fatal(err)
	}
	pinned := Grants(g).FS()
	defer pinned.Close()
	f, err := pinned.Open(w.ws + "/linked")
	if err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, f); got != "secret" {
		t.Fatalf("pinned read %q", got)
	}
}

func TestAPinnedFileReplacedSinceApprovalIsRefused(t *testing.T) {
	w := newWorld(t)
	g, err := Pin(w.out + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.out+"/other", "other")
	if err := os.Rename(w.out+"/other", w.out+"/secret"); err != nil {
		t.Fatal(err)
	}
	fsys := Grants(g).FS()
	defer fsys.Close()
	if _, err := fsys.Open(w.out + "/secret"); !errors.Is(err, ErrReplaced) {
		t.Fatalf("replaced file: %v", err)
	}
	if _, err := fsys.OpenFile(w.out+"/secret", os.O_WRONLY); !errors.Is(err, ErrReplaced) {
		t.Fatalf("replaced file for writing: %v", err)
	}
	if _, err := fsys.Stat(w.out + "/secret"); !errors.Is(err, ErrReplaced) {
		t.Fatalf("replaced file stat: %v", err)
	}
}

func TestAPinnedMissingPathIsCreatedBeneathTheApprovedDirectory(t *testing.T) {
	w := newWorld(t)
	g, err := Pin(w.out + "/a/b/new")
	if err != nil {
		t.Fatal(err)
	}
	if g.Anchor != w.out || g.Rest != "a/b/new" {
		t.Fatalf("pinned %+v", g)
	}
	fsys := Grants(g).FS()
	f, err := fsys.Create(w.out+"/a/b/new", 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	fsys.Close()
	if _, err := os.Stat(w.out + "/a/b/new"); err != nil {
		t.Fatal(err)
	}

	// The approved directory swapped for a link elsewhere: refused.
	g, err = Pin(w.out + "/later")
	if err != nil {
		t.Fatal(err)
	}
	moved := w.out + ".moved"
	if err := os.Rename(w.out, moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(w.ws, w.out); err != nil {
		t.Fatal(err)
	}
	fsys = Grants(g).FS()
	defer fsys.Close()
	if _, err := fsys.Create(w.out+"/later", 0o600); !errors.Is(err, ErrReplaced) {
		t.Fatalf("create beneath a replaced directory: %v", err)
	}
	if _, err := os.Lstat(w.ws + "/later"); err == nil {
		t.Fatal("created through the swapped directory")
	}
}

func TestAPinnedDirectoryConfinesWhatIsBelowIt(t *testing.T) {
	w := newWorld(t)
	if err := os.Symlink(w.ws, w.out+"/back-in"); err != nil {
		t.Fatal(err)
	}
	g, err := Pin(w.out)
	if err != nil {
		t.Fatal(err)
	}
	fsys := Grants(g).FS()
	defer fsys.Close()
	entries, err := fsys.ReadDir(w.out)
	if err != nil || len(entries) != 2 || entries[0].Name() != "back-in" || entries[1].Name() != "secret" {
		t.Fatalf("readdir: %v %v", entries, err)
	}
	f, err := fsys.Open(w.out + "/secret")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, f)
	if _, err := fsys.Open(w.out + "/back-in/sub/file"); !errors.Is(err, ErrEscapes) {
		t.Fatalf("a link out of the approved directory: %v", err)
	}
}

func TestOpeningAFIFODoesNotBlock(t *testing.T) {
	w := newWorld(t)
	if err := syscall.Mkfifo(w.ws+"/fifo", 0o644); err != nil {
		t.Fatal(err)
	}
	for name, a := range map[string]*Access{"confined": Grants(Beneath(w.ws, w.ws)), "unrestricted": Unrestricted()} {
		fsys := a.FS()
		f, err := fsys.Open(w.ws + "/fifo")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fi, err := f.Stat()
		if err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
			t.Errorf("%s: %v %v", name, fi, err)
		}
		f.Close()
		if _, err := fsys.ReadFile(w.ws+"/fifo", 10); !errors.Is(err, ErrNotRegular) {
			t.Errorf("%s: ReadFile of a FIFO: %v", name, err)
		}
		fsys.Close()
	}
}

func TestReadFileRefusesAFileOverTheLimit(t *testing.T) {
	w := newWorld(t)
	fsys := Unrestricted().FS()
	defer fsys.Close()
	if _, err := fsys.ReadFile(w.out+"/secret", 5); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v", err)
	}
	if b, err := fsys.ReadFile(w.out+"/secret", 6); err != nil || string(b) != "secret" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
}

func TestOpenFileRefusesFlagsThatChangeBeforeTheCheck(t *testing.T) {
	w := newWorld(t)
	fsys := Unrestricted().FS()
	defer fsys.Close()
	if _, err := fsys.OpenFile(w.out+"/secret", os.O_WRONLY|os.O_TRUNC); err == nil {
		t.Fatal("O_TRUNC accepted")
	}
	if b, _ := os.ReadFile(w.out + "/secret"); string(b) != "secret" {
		t.Fatalf("file changed: %q", b)
	}
}

func TestMkdirAllStaysBeneathTheRoot(t *testing.T) {
	w := newWorld(t)
	fsys := Grants(Beneath(w.ws+"/new/deep/file", w.ws)).FS()
	defer fsys.Close()
	if err := fsys.MkdirAll(w.ws + "/new/deep"); err != nil {
		t.Fatalf("MkdirAll inside: %v", err)
	}
	if fi, err := os.Stat(w.ws + "/new/deep"); err != nil || !fi.IsDir() {
		t.Fatalf("the directory was not made: %v", err)
	}
	if err := fsys.MkdirAll(w.ws); err != nil {
		t.Errorf("MkdirAll of the root itself: %v", err)
	}
	if err := fsys.MkdirAll(w.ws + "/rel-out/made"); !errors.Is(err, ErrEscapes) {
		t.Errorf("MkdirAll through a link leading out = %v, want ErrEscapes", err)
	}
	if _, err := os.Stat(w.out + "/made"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a directory was made outside: %v", err)
	}
}
