package codingtools

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
)

// sniffLen is how much of a file decides whether it is text, as git does.
const sniffLen = 8000

// looksBinary reports whether sample (the start of a file) is not text: it
// holds a NUL byte, or more than a tenth of it is not valid UTF-8 (a few
// stray Latin-1 bytes in otherwise ASCII text still count as text).
func looksBinary(sample []byte) bool {
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	bad := 0
	for i := 0; i < len(sample); {
		r, n := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && n == 1 {
			// A rune cut by the end of the sample is not evidence.
			if len(sample)-i < utf8.UTFMax && !utf8.FullRune(sample[i:]) {
				break
			}
			bad++
		}
		i += n
	}
	return len(sample) > 0 && bad*10 > len(sample)
}

// lineReader yields a file's lines without their terminators (LF or CRLF),
// keeping at most keep bytes of each line and counting the rest, so one
// gigantic line costs no more memory than keep. The line next returns is
// valid until the following call: its buffer is reused, so reading millions
// of lines makes no garbage.
type lineReader struct {
	r    *bufio.Reader
	keep int
	err  error
	buf  []byte
}

func newLineReader(r io.Reader, keep int) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64*1024), keep: keep}
}

// next returns the kept prefix of the next line (cut on a rune boundary) and
// how many bytes of the line were cut. ok is false at end of input or on a
// read error, which err then reports.
func (l *lineReader) next() (line []byte, cut int, ok bool) {
	buf := l.buf[:0]
	total := 0
	var last2 [2]byte
	for {
		frag, err := l.r.ReadSlice('\n')
		total += len(frag)
		// Keep two spare bytes so a line of exactly keep bytes still shows
		// its CRLF terminator, which is stripped below.
		if room := l.keep + 2 - len(buf); room > 0 {
			buf = append(buf, frag[:min(room, len(frag))]...)
		}
		switch {
		case len(frag) >= 2:
			last2 = [2]byte{frag[len(frag)-2], frag[len(frag)-1]}
		case len(frag) == 1:
			last2 = [2]byte{last2[1], frag[0]}
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !errors.Is(err, io.EOF) {
			l.err = err
			return nil, 0, false
		}
		if total == 0 {
			return nil, 0, false
		}
		break
	}
	l.buf = buf
	n := total
	if last2[1] == '\n' {
		n--
		if n > 0 && last2[0] == '\r' {
			n--
		}
	}
	kept := buf[:min(len(buf), n, l.keep)]
	if len(kept) < n {
		kept = trimPartialRune(kept)
	}
	return kept, n - len(kept), true
}

// trimPartialRune drops an incomplete UTF-8 sequence from the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			return b
		}
	}
	return b
}

// trimLeadingContinuation drops the bytes of a UTF-8 sequence whose start was
// cut off the front of b.
func trimLeadingContinuation(b []byte) []byte {
	for i := 0; i < len(b) && i < utf8.UTFMax; i++ {
		if utf8.RuneStart(b[i]) {
			return b[i:]
		}
	}
	return b
}
