package prompt

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/confine"
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
		data, size, err := readInstructions(cwd, path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read project instructions %s: %w", path, err)
		}
		content := strings.TrimRight(strings.ToValidUTF8(string(data), "\uFFFD"), "\r\n")
		cutShort := size > int64(len(data)) // only maxInstructionBytes were read
		if cutShort && (maxBytes <= 0 || maxBytes > len(content)) {
			maxBytes = len(content)
		}
		if strings.TrimSpace(content) == "" {
			continue
		}
		if maxBytes > 0 && (len(content) > maxBytes || cutShort) {
			total := int64(len(content))
			if cutShort {
				total = size
			}
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

// maxInstructionBytes bounds what is read of an instruction file whatever
// agent.instructions_max_bytes says.
const maxInstructionBytes = 16 << 20

// readInstructions reads the instruction file at path beneath the
// workspace cwd, as the file tools would: a link that leads out of the
// workspace, a file with other hard links (maybe one outside) and anything
// but a regular file are refused, and a FIFO cannot block the open. A
// repository's AGENTS.md -> ~/.ssh/id_rsa must not reach the model
// unasked. It returns at most maxInstructionBytes and the file's size.
func readInstructions(cwd, path string) ([]byte, int64, error) {
	root, err := filepath.Abs(cwd)
	if err != nil {
		return nil, 0, err
	}
	fsys := confine.Grants(confine.Beneath(path, root)).FS()
	defer fsys.Close()
	f, err := fsys.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, confine.ErrNotRegular
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInstructionBytes))
	return data, fi.Size(), err
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
