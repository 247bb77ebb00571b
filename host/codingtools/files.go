package codingtools

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// maxPreviewBytes bounds how much of a file a call preview (diff) loads.
const maxPreviewBytes = 1 << 20

// checkFresh enforces read-before-edit for the existing file abs (described
// by fi): the session must have read or written it, and it must not have
// changed since.
func (s *Set) checkFresh(errName, verb string, call *tools.Call, abs string, fi os.FileInfo) error {
	st, ok := s.files.lookup(sessionKey(call), realPath(abs))
	if !ok {
		return failf(errName, CodeNotRead, "%s has not been read in this session; read it with the read tool before %s it", display(call, abs), verb)
	}
	if !st.matches(fi) {
		return failf(errName, CodeChangedOnDisk, "%s changed on disk since this session last read it; read it again before %s it", display(call, abs), verb)
	}
	return nil
}

// overwrite replaces the content of the existing file abs in place, keeping
// its mode, owner and any links pointing at it.
func overwrite(abs string, data []byte) error {
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// create writes a new file, creating missing parent directories. It fails if
// the file appeared meanwhile: the session has not read that one.
func create(abs string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(abs, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// previewText loads abs for a diff preview; ok is false when the file is
// missing, not a regular file, too large or binary.
func previewText(abs string) (text string, exists, ok bool) {
	fi, err := os.Stat(abs)
	if err != nil {
		return "", !errors.Is(err, fs.ErrNotExist), false
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxPreviewBytes {
		return "", true, false
	}
	b, err := os.ReadFile(abs)
	if err != nil || looksBinary(b[:min(len(b), sniffLen)]) {
		return "", true, false
	}
	return string(b), true, true
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			n++
		}
	}
	if s[len(s)-1] != '\n' {
		n++
	}
	return n
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
