package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// instructionFiles are the project instruction files LoadInstructions looks
// for in the workspace, in order of precedence.
var instructionFiles = [...]string{"AGENTS.md", "CLAUDE.md"}

// LoadInstructions reads the first non-empty instruction file (AGENTS.md,
// else CLAUDE.md) in cwd and wraps it as a user message:
//
//	<system-reminder>
//	Instructions from: <absolute path>
//
//	<content>
//	</system-reminder>
//
// with trailing newlines of the file dropped. Content beyond maxBytes is cut
// on a rune boundary and followed by a note saying how much was left out
// (maxBytes <= 0 means no limit). It returns nil, nil when there is no such
// file, and an error naming the file when one exists but cannot be read.
func LoadInstructions(cwd string, maxBytes int, id string) (*session.Message, error) {
	for _, name := range instructionFiles {
		path, err := filepath.Abs(filepath.Join(cwd, name))
		if err != nil {
			return nil, fmt.Errorf("locate project instructions %s: %w", name, err)
		}
		data, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read project instructions %s: %w", path, err)
		}
		content := strings.TrimRight(strings.ToValidUTF8(string(data), "\uFFFD"), "\r\n")
		if strings.TrimSpace(content) == "" {
			continue
		}
		if maxBytes > 0 && len(content) > maxBytes {
			total := len(content)
			content = cutAtRune(content, maxBytes)
			content += fmt.Sprintf("\n\n[Truncated: showing the first %d of %d bytes. Read %s for the rest.]", len(content), total, path)
		}
		text := "<system-reminder>\nInstructions from: " + path + "\n\n" + content + "\n</system-reminder>"
		source := session.MustMarshal(struct {
			Kind string `json:"kind"`
			Form string `json:"form"`
			Path string `json:"path"`
		}{session.SourceInstructions, "instructions", path})
		msg := userMessage(text, source, id)
		return &msg, nil
	}
	return nil, nil
}

// cutAtRune returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func cutAtRune(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
