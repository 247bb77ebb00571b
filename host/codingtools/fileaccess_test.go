package codingtools

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// bufferFiles is a client's file access: text comes from and goes to an
// in-memory buffer map; the disk only says what exists.
type bufferFiles struct {
	mu      sync.Mutex
	buffers map[string]string
}

func (b *bufferFiles) text(abs string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.buffers[abs]
	return s, ok
}

func (b *bufferFiles) set(abs, text string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buffers[abs] = text
}

func (b *bufferFiles) Open(_ context.Context, _ *tools.Call, abs string, _ OpenMode) (File, error) {
	fi, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	return &bufferFile{b: b, abs: abs, fi: fi}, nil
}

func (b *bufferFiles) Create(_ context.Context, _ *tools.Call, abs string, data []byte) (Version, error) {
	if _, ok := b.text(abs); ok {
		return Version{}, fs.ErrExist
	}
	b.set(abs, string(data))
	return TextVersion(data), nil
}

type bufferFile struct {
	b   *bufferFiles
	abs string
	fi  os.FileInfo
}

func (f *bufferFile) Info() os.FileInfo { return f.fi }
func (f *bufferFile) Content(context.Context) (io.Reader, error) {
	s, _ := f.b.text(f.abs)
	return strings.NewReader(s), nil
}
func (f *bufferFile) Version(context.Context) (Version, error) {
	s, _ := f.b.text(f.abs)
	return TextVersion([]byte(s)), nil
}
func (f *bufferFile) Replace(_ context.Context, data []byte) (Version, error) {
	f.b.set(f.abs, string(data))
	return TextVersion(data), nil
}
func (f *bufferFile) Close() error { return nil }

func TestToolsUseTheInstalledFileAccess(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "main.go")
	writeFile(t, path, "on disk\n")
	bufs := &bufferFiles{buffers: map[string]string{path: "unsaved buffer\nsecond line\n"}}
	ctx := WithFiles(context.Background(), bufs)
	s := testSet(t, nil)
	live := newLive(t, "s1", ws)
	run := func(name string, args map[string]any) (string, error) {
		t.Helper()
		return s.exec(t, ctx, mkCall(t, name, live, ws, args))
	}

	got, err := run("read", map[string]any{"file_path": "main.go"})
	if err != nil || !strings.Contains(got, "1: unsaved buffer\n2: second line") {
		t.Fatalf("read = %q, %v; want the buffer's text", got, err)
	}
	if _, err := run("edit", map[string]any{"file_path": "main.go", "old_string": "second", "new_string": "2nd"}); err != nil {
		t.Fatalf("edit: %v", err)
	}
	if b, _ := bufs.text(path); b != "unsaved buffer\n2nd line\n" {
		t.Errorf("buffer after edit = %q", b)
	}
	if d := readFile(t, path); d != "on disk\n" {
		t.Errorf("disk after edit = %q, want it untouched", d)
	}

	// The user types in the editor: the next edit must re-read first.
	bufs.set(path, "typed by the user\n")
	_, err = run("edit", map[string]any{"file_path": "main.go", "old_string": "2nd", "new_string": "second"})
	wantCode(t, err, CodeChangedOnDisk, "main.go changed in the editor since this session last read it")

	if _, err := run("write", map[string]any{"file_path": "new.txt", "content": "fresh\n"}); err != nil {
		t.Fatalf("write new: %v", err)
	}
	if b, ok := bufs.text(filepath.Join(ws, "new.txt")); !ok || b != "fresh\n" {
		t.Errorf("buffer of new.txt = %q, %v", b, ok)
	}
	if _, err := os.Stat(filepath.Join(ws, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("new.txt reached the disk: %v", err)
	}
}

func TestVersionsOfDifferentKindsNeverMatch(t *testing.T) {
	ws := workspace(t)
	path := filepath.Join(ws, "f")
	writeFile(t, path, "x")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if DiskVersion(fi) == TextVersion([]byte("x")) {
		t.Error("a disk version equals a buffer version")
	}
	if x, again := TextVersion([]byte("x")), TextVersion([]byte("x")); x != again || x == TextVersion([]byte("y")) {
		t.Error("buffer versions do not compare by text")
	}
}
