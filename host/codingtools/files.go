package codingtools

import (
	"errors"
	"io/fs"
	"os"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// maxPreviewBytes bounds how much of a file a call preview (diff) loads.
const maxPreviewBytes = 1 << 20

// checkFresh enforces read-before-edit for the existing file abs, whose
// content is now at version v: the session must have read or written it,
// and it must not have changed since.
func (s *Set) checkFresh(errName, verb string, call *tools.Call, abs string, v Version) error {
	seen, ok := s.files.lookup(sessionKey(call), realPath(abs))
	if !ok {
		return failf(errName, CodeNotRead, "%s has not been read in this session; read it with the read tool before %s it", display(call, abs), verb)
	}
	if seen != v {
		where := "on disk"
		if v.InBuffer() || seen.InBuffer() {
			where = "in the editor"
		}
		return failf(errName, CodeChangedOnDisk, "%s changed %s since this session last read it; read it again before %s it", display(call, abs), where, verb)
	}
	return nil
}

// writeAll writes data at the start of the open, empty (new) file f,
// closes it and returns what fstat said about it after writing: the file
// written, whatever its name points at by now.
func writeAll(f *os.File, data []byte) (os.FileInfo, error) {
	_, err := f.WriteAt(data, 0)
	var fi os.FileInfo
	if err == nil {
		fi, err = f.Stat()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return fi, err
}

// previewText loads abs for a diff preview shown to the user before the
// call is decided on; ok is false when the file is missing, not a regular
// file, too large or binary. The open never blocks on a FIFO.
func previewText(abs string) (text string, exists, ok bool) {
	fsys := confine.Unrestricted().FS()
	defer fsys.Close()
	b, err := fsys.ReadFile(abs, maxPreviewBytes)
	if err != nil {
		return "", !errors.Is(err, fs.ErrNotExist), false
	}
	if looksBinary(b[:min(len(b), sniffLen)]) {
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
