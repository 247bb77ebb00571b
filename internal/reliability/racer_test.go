package reliability

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// racerOps is how many tool calls the symlink racer makes (issue 13).
const racerOps = 10000

const outsideSecret = "OUTSIDE-SECRET"

// flipper swaps the workspace directory ws/d with ws/d.swap, a symbolic
// link to the outside directory, as fast as it can: ws/d is a real
// directory one moment and a link out the next. RENAME_EXCHANGE makes each
// swap atomic; where the file system lacks it, d flips between two links
// (to the inside directory and to the outside one) by renaming over it.
type flipper struct {
	ws, out string
	flips   atomic.Int64
}

func (f *flipper) run(stop <-chan struct{}) error {
	dirfd, err := unix.Open(f.ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	exchange := true
	for i := 0; ; i++ {
		select {
		case <-stop:
			return nil
		default:
		}
		// Leave the tool calls some of a small, loaded machine.
		runtime.Gosched()
		if exchange {
			err := unix.Renameat2(dirfd, "d", dirfd, "d.swap", unix.RENAME_EXCHANGE)
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
				exchange = false
				if err := f.linkMode(); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return err
			}
		} else {
			target := "d.real"
			if i%2 == 1 {
				target = f.out
			}
			_ = os.Remove(filepath.Join(f.ws, "d.next"))
			if err := os.Symlink(target, filepath.Join(f.ws, "d.next")); err != nil {
				return err
			}
			if err := os.Rename(filepath.Join(f.ws, "d.next"), filepath.Join(f.ws, "d")); err != nil {
				return err
			}
		}
		f.flips.Add(1)
	}
}

// linkMode prepares the fallback: the real directory moves to d.real and d
// becomes a link.
func (f *flipper) linkMode() error {
	real := filepath.Join(f.ws, "d")
	if fi, err := os.Lstat(real); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real = filepath.Join(f.ws, "d.swap")
	}
	if err := os.Rename(real, filepath.Join(f.ws, "d.real")); err != nil {
		return err
	}
	_ = os.Remove(filepath.Join(f.ws, "d"))
	_ = os.Remove(filepath.Join(f.ws, "d.swap"))
	return os.Symlink("d.real", filepath.Join(f.ws, "d"))
}

// TestASymlinkRacerNeverMovesAToolOutsideTheWorkspace is the racer of
// issue 13: while a goroutine flips a workspace directory between a real
// directory and a symbolic link to a directory outside, read, write, edit,
// grep and glob run 10,000 times through the ACP runtime's real tool
// pipeline in accept-edits mode with an approver that rejects every ask.
// Whatever the interleaving, no result may show an outside file's content
// or name, and the outside directory must end exactly as it began: nothing
// created, nothing changed. Calls may fail (a swap between the permission
// check and the open is refused); none may escape.
func TestASymlinkRacerNeverMovesAToolOutsideTheWorkspace(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, out, home := filepath.Join(root, "ws"), filepath.Join(root, "outside"), filepath.Join(root, "home")
	const workers = 3
	inside := map[string]string{"file.txt": "inside content\n", "sub/a.txt": "inside content\n"}
	outsideFiles := map[string]string{"file.txt": outsideSecret + "\n", "only-outside.txt": outsideSecret + "\n", "sub/a.txt": outsideSecret + "\n", "sub/only-outside-b.txt": outsideSecret + "\n"}
	for w := range workers {
		inside[fmt.Sprintf("w%d.txt", w)] = "inside A\n"
		outsideFiles[fmt.Sprintf("w%d.txt", w)] = outsideSecret + " A\n"
	}
	for dir, files := range map[string]map[string]string{filepath.Join(ws, "d"): inside, out: outsideFiles} {
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(out, filepath.Join(ws, "d.swap")); err != nil {
		t.Fatal(err)
	}

	h := hermetic{root: root, home: home, cwd: ws}
	rt := newRuntime(t, compositions.ACP, h.config(t, "", "permissions.mode=accept-edits"))
	a, err := rt.NewSession(context.Background(), ws)
	if err != nil {
		t.Fatal(err)
	}
	ap := &recordingApprover{outcome: tools.Rejected}
	t.Cleanup(rt.Tools.SetApprover(ap))
	live := a.Session()

	fl := &flipper{ws: ws, out: out}
	stop := make(chan struct{})
	flipErr := make(chan error, 1)
	go func() { flipErr <- fl.run(stop) }()

	var (
		mu       sync.Mutex
		escapes  []string
		okReads  atomic.Int64
		refusals atomic.Int64
		calls    atomic.Int64
	)
	escape := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(escapes) < 20 {
			escapes = append(escapes, fmt.Sprintf(format, args...))
		}
	}
	run := func(name string, args map[string]any) tools.Result {
		raw, _ := json.Marshal(args)
		n := calls.Add(1)
		r := rt.Tools.Run(context.Background(), &tools.Call{CallID: fmt.Sprintf("c%d", n), Name: name, Arguments: string(raw), Session: live, Cwd: ws})
		if r.IsError {
			refusals.Add(1)
		}
		text := resultText(r)
		if strings.Contains(text, outsideSecret) || strings.Contains(text, "only-outside") {
			escape("%s %s: %q", name, raw, text)
		}
		return r
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			mine := fmt.Sprintf("d/w%d.txt", w)
			for i := w; i < racerOps; i += workers {
				switch i % 10 {
				case 0, 1, 2:
					if r := run("read", map[string]any{"file_path": "d/file.txt"}); !r.IsError {
						okReads.Add(1)
					}
				case 3, 4:
					run("write", map[string]any{"file_path": fmt.Sprintf("d/new-%d.txt", i), "content": "created\n"})
				case 5:
					run("read", map[string]any{"file_path": mine})
				case 6:
					run("edit", map[string]any{"file_path": mine, "old_string": "A", "new_string": "B"})
					run("edit", map[string]any{"file_path": mine, "old_string": "B", "new_string": "A"})
				case 7, 8:
					// d/sub stays small while creates fill d.
					run("grep", map[string]any{"pattern": "SECRET|inside", "path": "d/sub", "output_mode": "content"})
				case 9:
					run("glob", map[string]any{"pattern": "d/sub/*"})
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	if err := <-flipErr; err != nil {
		t.Fatalf("flipper: %v", err)
	}

	got := map[string]string{}
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(out, path)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range got {
		if want, ok := outsideFiles[name]; !ok {
			escape("created outside: %s", name)
		} else if content != want {
			escape("changed outside: %s = %q", name, content)
		}
	}
	t.Logf("%d calls, %d flips, %d successful reads of d/file.txt, %d refused or failed calls, %d asks",
		calls.Load(), fl.flips.Load(), okReads.Load(), refusals.Load(), len(ap.take()))
	if len(escapes) > 0 {
		sort.Strings(escapes)
		t.Fatalf("%d or more escapes, for example:\n%s", len(escapes), strings.Join(escapes, "\n"))
	}
	if calls.Load() < racerOps || fl.flips.Load() == 0 || okReads.Load() == 0 {
		t.Fatalf("the race did not run: %d calls, %d flips, %d reads inside", calls.Load(), fl.flips.Load(), okReads.Load())
	}
}
