package snapshots

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// modes are the two ways a scenario reaches the ACP composition.
var modes = []struct {
	name string
	run  func(*testing.T, *scenario, *env) result
}{
	{"in-process", runInProcess},
	{"binary", runBinary},
}

// TestScenarios replays every scenario in-process and through the built
// binary and compares the normalized stdout frames and the normalized
// persisted logs with the committed ones; every request/header of every
// log must carry its class's pinned header. go test -update rewrites the
// committed files from the in-process run.
func TestScenarios(t *testing.T) {
	for _, sc := range loadScenarios(t) {
		t.Run(sc.Name, func(t *testing.T) {
			for _, mode := range modes {
				t.Run(mode.name, func(t *testing.T) {
					e := newEnv(t, sc)
					res := mode.run(t, sc, e)
					write := updating() && mode.name == "in-process"
					check(t, sc, e, res, write)
				})
			}
		})
	}
}

func check(t *testing.T, sc *scenario, e *env, res result, write bool) {
	t.Helper()
	n := newNormalizer(e)
	stdout, err := n.stdout(res.stdout)
	if err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, res.stderr)
	}
	compareGolden(t, filepath.Join(sc.Dir, "stdout.golden.jsonl"), stdout, write)

	pinned := goldenHeader(t, sc.Input.Class)
	for i, raw := range res.logs {
		for j, h := range requestHeaders(t, n, raw) {
			if h.system != pinned.system {
				t.Errorf("%s request/header %d: system prompt differs from the %s class pin:\n%s", logName(i), j, sc.Input.Class, firstDiff([]byte(h.system), []byte(pinned.system)))
			}
			if !bytes.Equal(h.tools, pinned.tools) {
				t.Errorf("%s request/header %d: tool schemas differ from the %s class pin:\n%s", logName(i), j, sc.Input.Class, firstDiff(h.tools, pinned.tools))
			}
		}
		got, err := n.log(raw)
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Join(sc.Dir, logName(i)), got, write)
	}
	if write {
		// Drop logs of sessions the scenario no longer creates.
		for i := len(res.logs); ; i++ {
			p := filepath.Join(sc.Dir, logName(i))
			if !fileExists(p) {
				break
			}
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	} else if extra := filepath.Join(sc.Dir, logName(len(res.logs))); fileExists(extra) {
		t.Errorf("%s is committed but the run persisted only %d session(s)", extra, len(res.logs))
	}
}

// compareGolden compares got with the committed file, or rewrites it.
func compareGolden(t *testing.T, path string, got []byte, write bool) {
	t.Helper()
	if write {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (author it with go test -update, then review it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it):\n%s", path, firstDiff(got, want))
	}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want []byte) string {
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d:\n  got:  %s\n  want: %s", i+1, truncate(gl), truncate(wl))
		}
	}
	return "(no line differs; check the trailing newline)"
}
