package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/tools"
	"github.com/seed-e9b4dba4/dsh/internal/fakellm"
)

// diskUse sums the regular files under dir.
func diskUse(t *testing.T, dir string) (total, largest int64) {
	t.Helper()
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			total += info.Size()
			largest = max(largest, info.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total, largest
}

// TestYesLeavesAtMostTheCapsOnDisk runs `yes` through the bash tool of a
// composed runtime until its timeout, three times: each run saves at most
// tools.bash.saved_output.max_bytes and says so, and the retention rule
// keeps the whole directory within keep_total_bytes plus the newest file.
// The caps are small so the test is fast; the defaults are 100 MiB and 1 GiB.
func TestYesLeavesAtMostTheCapsOnDisk(t *testing.T) {
	h := newHermetic(t)
	tmp := filepath.Join(h.root, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	const capBytes, keepBytes = 1 << 20, 2 << 20
	cfg := h.config(t, "", "permissions.mode=bypass",
		"tools.bash.saved_output.max_bytes="+strconv.Itoa(capBytes),
		"tools.bash.saved_output.keep_total_bytes="+strconv.Itoa(keepBytes))
	rt := newRuntime(t, compositions.ACP, cfg)
	a, err := rt.NewSession(context.Background(), h.cwd)
	if err != nil {
		t.Fatal(err)
	}
	outputs := filepath.Join(tmp, "dsh-"+strconv.Itoa(os.Getuid()), "bash-output")
	for i := range 3 {
		args, _ := json.Marshal(map[string]any{"command": "yes", "description": "flood", "timeout_ms": 1500})
		r := rt.Tools.Run(context.Background(), &tools.Call{CallID: fmt.Sprintf("c%d", i), Name: "bash", Arguments: string(args), Session: a.Session(), Cwd: h.cwd})
		text := ""
		for _, c := range r.Content {
			text += c.Text
		}
		if r.IsError || !strings.Contains(text, "only the first 1 MiB of the") || !strings.Contains(text, "the command kept running") ||
			!strings.HasSuffix(text, "[timed out after 1500ms]") {
			t.Fatalf("run %d: %.300s … %.100s", i, text, text[max(0, len(text)-100):])
		}
		total, largest := diskUse(t, outputs)
		if largest > capBytes || total > keepBytes+capBytes {
			t.Errorf("after run %d: %d bytes saved, the largest file %d; want at most %d per file and %d in all",
				i, total, largest, capBytes, keepBytes+capBytes)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(tmp, "dsh-bash-*")); len(leftovers) != 0 {
		t.Errorf("per-process output directories: %q", leftovers)
	}
}

// TestGrepOfALargeFileStaysBoundedInMemory runs the real dsh binary on a
// model turn that greps, in content mode, a 48 MB file in which all 4.4
// million lines match: grep keeps the 200 lines it shows and counts the
// rest, so dsh's peak RSS stays far below what keeping every line cost (744
// MB on a 200 MB file before). The file is streamed, being over the size
// grep loads whole.
func TestGrepOfALargeFileStaysBoundedInMemory(t *testing.T) {
	h := newHermetic(t)
	const line = "match line\n"
	chunk := strings.Repeat(line, (1<<20)/len(line))
	f, err := os.Create(filepath.Join(h.cwd, "big.log"))
	if err != nil {
		t.Fatal(err)
	}
	for range 48 {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	lines := 48 * len(chunk) / len(line)
	model := fakellm.New(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{{ID: "c1", Name: "grep", Arguments: `{"pattern":"match","path":"big.log","output_mode":"content"}`}}},
		fakellm.Reply{Text: "done"},
	)
	defer model.Close()
	env := []string{"HOME=" + h.root, "PATH=" + os.Getenv("PATH"), "DSH_HOME=" + h.home, "DEEPSEEK_API_KEY=k", "TMPDIR=" + h.root}
	cmd, peak := rssCmd(t, h.cwd, env, dshBinary(t), "run", "--set", "llm.base_url="+model.URL, "find the matches")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("dsh run: %v\n%s", err, out)
	}
	reqs := model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model got %d requests, want 2", len(reqs))
	}
	if want := fmt.Sprintf("(%d more results not shown; narrow the pattern)", lines-200); !strings.Contains(string(reqs[1]), want) {
		t.Errorf("the grep result the model got does not end %q", want)
	}
	// Keeping every line holds 4.4 million rendered lines, over 200 MB.
	if rss := peak(); rss > 100<<20 {
		t.Errorf("dsh peaked at %d MiB RSS grepping the file, want at most 100 MiB", rss>>20)
	} else {
		t.Logf("dsh peaked at %d MiB RSS", rss>>20)
	}
}
