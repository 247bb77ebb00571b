package prompt_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadInstructions(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		maxBytes int
		wantFile string // "" means no message
		wantBody string
	}{
		{name: "no files", files: nil},
		{name: "AGENTS.md wins over CLAUDE.md",
			files:    map[string]string{"AGENTS.md": "Use tabs.\n", "CLAUDE.md": "Use spaces.\n"},
			wantFile: "AGENTS.md", wantBody: "Use tabs."},
		{name: "CLAUDE.md alone", files: map[string]string{"CLAUDE.md": "Run make test.\n\n"},
			wantFile: "CLAUDE.md", wantBody: "Run make test."},
		{name: "an empty AGENTS.md falls back to CLAUDE.md",
			files:    map[string]string{"AGENTS.md": " \n", "CLAUDE.md": "Claude rules"},
			wantFile: "CLAUDE.md", wantBody: "Claude rules"},
		{name: "markup stays literal", files: map[string]string{"AGENTS.md": "<b>bold</b> & — done"},
			wantFile: "AGENTS.md", wantBody: "<b>bold</b> & — done"},
		{name: "truncation never splits a rune",
			// "é" is two bytes; a 7-byte cap lands inside the third one.
			files: map[string]string{"AGENTS.md": "ab" + "éé" + "é" + "tail"}, maxBytes: 7,
			wantFile: "AGENTS.md", wantBody: "abéé\n\n[Truncated: showing the first 6 of 12 bytes. Read {{path}} for the rest.]"},
		{name: "content within the cap is whole", files: map[string]string{"AGENTS.md": "short"}, maxBytes: 5,
			wantFile: "AGENTS.md", wantBody: "short"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				writeFile(t, dir, name, content)
			}
			msg, err := prompt.LoadInstructions(dir, tc.maxBytes, "i1")
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantFile == "" {
				if msg != nil {
					t.Fatalf("got a message: %+v", msg)
				}
				return
			}
			if msg == nil {
				t.Fatal("no message")
			}
			path := filepath.Join(dir, tc.wantFile)
			body := strings.ReplaceAll(tc.wantBody, "{{path}}", path)
			wantText := "<system-reminder>\nInstructions from: " + path + "\n\n" + body + "\n</system-reminder>"
			if got := session.JoinText(msg.Content); got != wantText {
				t.Fatalf("text\n got  %q\n want %q", got, wantText)
			}
			if msg.Role != session.RoleUser || msg.ID != "i1" || msg.SourceKind() != session.SourceInstructions {
				t.Fatalf("message %+v", msg)
			}
			b, err := session.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			src := `"source":{"kind":"agent-instructions","form":"instructions","path":` + quote(path) + `}`
			if !strings.Contains(string(b), src) {
				t.Fatalf("source not in %s", b)
			}
		})
	}
}

func quote(s string) string {
	b, _ := session.Marshal(s)
	return string(b)
}

func TestLoadInstructionsUsesAnAbsolutePathForARelativeCwd(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "AGENTS.md", "rules")
	t.Chdir(dir)
	msg, err := prompt.LoadInstructions(".", 0, "i")
	if err != nil || msg == nil {
		t.Fatalf("msg %v err %v", msg, err)
	}
	abs, _ := filepath.Abs("AGENTS.md")
	if !strings.Contains(session.JoinText(msg.Content), "Instructions from: "+abs+"\n") {
		t.Fatalf("text %q", session.JoinText(msg.Content))
	}
}

func TestLoadInstructionsReportsAnUnreadableFile(t *testing.T) {
	dir := t.TempDir()
	// A directory named AGENTS.md exists but cannot be read as a file.
	if err := os.Mkdir(filepath.Join(dir, "AGENTS.md"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := prompt.LoadInstructions(dir, 0, "i")
	if err == nil || !strings.Contains(err.Error(), "read project instructions "+filepath.Join(dir, "AGENTS.md")) {
		t.Fatalf("err = %v", err)
	}
}

// A repository can plant AGENTS.md as a link to a secret outside the
// workspace, as a second name (hard link) of one, or as a FIFO; none is
// read, and a link inside the workspace still is.
func TestLoadInstructionsNeverReadsOutsideTheWorkspace(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "id_rsa")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"link out", func(p string) error { return os.Symlink(secret, p) }},
		{"relative link out", func(p string) error { return os.Symlink("../id_rsa", p) }},
		{"hard link", func(p string) error { return os.Link(secret, p) }},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, err := os.MkdirTemp(root, "ws")
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.plant(filepath.Join(dir, "AGENTS.md")); err != nil {
				t.Fatal(err)
			}
			msg, err := prompt.LoadInstructions(dir, 0, "i")
			if msg != nil && strings.Contains(session.JoinText(msg.Content), "PRIVATE KEY") {
				t.Fatal("the file outside the workspace reached the instructions")
			}
			if err == nil || !strings.Contains(err.Error(), "read project instructions "+filepath.Join(dir, "AGENTS.md")) {
				t.Errorf("err = %v, want a refusal naming the file", err)
			}
		})
	}
	t.Run("link inside", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "docs.md"), []byte("use tabs"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("docs.md", filepath.Join(dir, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		msg, err := prompt.LoadInstructions(dir, 0, "i")
		if err != nil || msg == nil || !strings.Contains(session.JoinText(msg.Content), "use tabs") {
			t.Fatalf("LoadInstructions = %v, %v", msg, err)
		}
	})
}

// A huge instruction file is read only up to a bound, whatever
// agent.instructions_max_bytes says, and the note gives its real size.
func TestLoadInstructionsReadsAHugeFileOnlyUpToABound(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "AGENTS.md")
	if err := os.WriteFile(path, []byte("rules first"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<20); err != nil { // sparse: cheap to make
		t.Fatal(err)
	}
	msg, err := prompt.LoadInstructions(dir, 0, "i")
	if err != nil {
		t.Fatal(err)
	}
	text := session.JoinText(msg.Content)
	if len(text) > 17<<20 || !strings.HasPrefix(strings.SplitN(text, "\n\n", 2)[1], "rules first") ||
		!strings.Contains(text, "[Truncated: showing the first 16777216 of 67108864 bytes.") {
		t.Fatalf("%d bytes, tail %q", len(text), text[max(0, len(text)-200):])
	}
}
