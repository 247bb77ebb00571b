package store

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// readBufferSize is the read buffer; longer lines are assembled across
// reads up to MaxEventBytes.
const readBufferSize = 256 << 10

// logReaders are the read buffers of whole-log reads (readLog,
// readBufferSize each), used again by the next read: a build reads tens
// of thousands of logs, and a buffer each (even one sized to its log)
// was an eighth of all it allocated. headerReaders are the smaller ones
// of header reads (readHeader): a first listing reads every log's.
var (
	logReaders    = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferSize) }}
	headerReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, headerBufferSize) }}
)

// headerBufferSize is the read buffer of a header read; a longer header
// is assembled across reads up to maxHeaderLen.
const headerBufferSize = 4096

// newPooledReader reads src with a buffer of pool, holding lines of up to
// limit bytes; release gives the buffer back, after which no line it
// returned may be used.
func newPooledReader(pool *sync.Pool, src *io.SectionReader, limit int) *lineReader {
	r := pool.Get().(*bufio.Reader)
	r.Reset(src)
	return &lineReader{src: src, r: r, limit: limit, pool: pool}
}

// release gives a newPooledReader's buffer back.
func (lr *lineReader) release() {
	if lr.pool != nil {
		lr.r.Reset(nil)
		lr.pool.Put(lr.r)
		lr.r, lr.pool = nil, nil
	}
}

// MaxEventBytes bounds one line of a log (an event, or the header). Append
// refuses a longer event and reading reports one as a CorruptError, after
// streaming past it without holding more than this much of it, so one
// enormous event costs bounded memory and affects only its own session.
const MaxEventBytes = 16 << 20

// maxHeaderLen bounds how much of a file List reads looking for line 1.
const maxHeaderLen = 1 << 20

// lineReader yields complete lines and tracks the offset just past the last
// newline, which is where a torn tail begins.
type lineReader struct {
	src      *io.SectionReader
	r        *bufio.Reader
	buf      []byte
	scan     []byte     // measure's window
	complete int64      // bytes consumed through the last newline
	torn     int64      // bytes after the last newline (known once next returns io.EOF)
	limit    int        // longest line returned; longer ones are skipped with errLineTooLong
	pool     *sync.Pool // the pool r is from, if any (see release)
}

func newLineReader(src *io.SectionReader, bufSize, limit int) *lineReader {
	return &lineReader{src: src, r: bufio.NewReaderSize(src, bufSize), limit: limit}
}

var errLineTooLong = errors.New("line too long")

// next returns the next complete line without its newline. The slice is
// valid until the next call. At the end it returns io.EOF and sets torn.
// A complete line longer than limit is consumed without being kept and
// reported as errLineTooLong; reading may go on after it.
//
// A line longer than the read buffer is measured first (measure), so it is
// assembled in one allocation of its own size, and one over the limit is
// skipped without any of it being held: a 50 MB line costs no more memory
// than a short one.
func (lr *lineReader) next() ([]byte, error) {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.r.ReadSlice('\n')
		switch {
		case err == nil:
			lr.complete += int64(len(lr.buf) + len(frag))
			if len(lr.buf)+len(frag)-1 > lr.limit {
				return nil, errLineTooLong
			}
			if len(lr.buf) == 0 {
				return frag[:len(frag)-1], nil
			}
			lr.buf = append(lr.buf, frag...)
			return lr.buf[:len(lr.buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(lr.buf) == 0 {
				n, err := lr.measure(lr.complete)
				if err != nil {
					return nil, err
				}
				if n < 0 {
					return nil, lr.skipLine(int64(len(frag)))
				}
				if cap(lr.buf) < n {
					lr.buf = make([]byte, 0, n)
				}
			}
			if len(lr.buf)+len(frag) > lr.limit {
				return nil, lr.skipLine(int64(len(lr.buf) + len(frag)))
			}
			lr.buf = append(lr.buf, frag...)
		case errors.Is(err, io.EOF):
			lr.torn = int64(len(lr.buf) + len(frag))
			return nil, io.EOF
		default:
			return nil, err
		}
	}
}

// measure returns the length, newline included, of the line starting at
// off, or -1 when no newline comes within limit+1 bytes (a line over the
// limit, or a torn tail). It reads through a small window it keeps, so
// measuring holds nothing of the line.
func (lr *lineReader) measure(off int64) (int, error) {
	if lr.scan == nil {
		lr.scan = make([]byte, 64<<10)
	}
	for n := 0; n <= lr.limit; {
		k, err := lr.src.ReadAt(lr.scan[:min(len(lr.scan), lr.limit+1-n)], off+int64(n))
		if i := bytes.IndexByte(lr.scan[:k], '\n'); i >= 0 {
			return n + i + 1, nil
		}
		n += k
		if errors.Is(err, io.EOF) {
			return -1, nil
		}
		if err != nil {
			return 0, err
		}
	}
	return -1, nil
}

// skipLine discards the rest of a line of which n bytes were read. A line
// that never ends is a torn tail like any other.
func (lr *lineReader) skipLine(n int64) error {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.r.ReadSlice('\n')
		n += int64(len(frag))
		switch {
		case err == nil:
			lr.complete += n
			return errLineTooLong
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			lr.torn = n
			return io.EOF
		default:
			return err
		}
	}
}

// logData is one read of a log's complete lines.
type logData struct {
	header   session.Header
	events   []session.Event
	complete int64 // offset just past the last newline
	torn     int64 // bytes after it: a crash's leftovers or a write in progress
}

// readLog reads the first size bytes of a log. Bytes after the last newline
// are reported as torn, never decoded. The header's id must be id.
func readLog(ctx context.Context, r io.ReaderAt, size int64, path, id string) (logData, error) {
	lr := newPooledReader(&logReaders, io.NewSectionReader(r, 0, size), MaxEventBytes)
	defer lr.release()
	var d logData
	line, err := lr.next()
	if errors.Is(err, io.EOF) {
		if lr.torn == 0 {
			return d, &CorruptError{Path: path, Line: 1, Err: errors.New("log is empty (no session header)")}
		}
		return d, &CorruptError{Path: path, Line: 1, Err: errors.New("session header is truncated")}
	}
	if errors.Is(err, errLineTooLong) {
		return d, &CorruptError{Path: path, Line: 1, Err: errors.New("session header is longer than the limit of a line")}
	}
	if err != nil {
		return d, fmt.Errorf("read session log %s: %w", path, err)
	}
	if d.header, err = decodeHeader(line, id); err != nil {
		return d, &CorruptError{Path: path, Line: 1, Err: err}
	}
	// The events of the lines read ahead (all of a log that fits the
	// buffer) take one allocation instead of a slice grown line by line.
	if ahead, err := lr.r.Peek(lr.r.Buffered()); err == nil {
		d.events = make([]session.Event, 0, bytes.Count(ahead, []byte{'\n'}))
	}
	for n := 2; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return d, err
			}
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			return d, &CorruptError{Path: path, Line: n, Err: fmt.Errorf("event is larger than the %d MiB limit", MaxEventBytes>>20)}
		}
		if err != nil {
			return d, fmt.Errorf("read session log %s: %w", path, err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if d.events, err = appendLine(d.events, line, len(d.events)); err != nil {
			return d, &CorruptError{Path: path, Line: n, Err: err}
		}
	}
	d.complete, d.torn = lr.complete, lr.torn
	return d, nil
}

// readHeader reads only line 1 of a log.
func readHeader(r io.ReaderAt, size int64, path, id string) (session.Header, error) {
	lr := newPooledReader(&headerReaders, io.NewSectionReader(r, 0, min(size, maxHeaderLen+1)), maxHeaderLen)
	defer lr.release() // decodeHeader keeps nothing of line
	line, err := lr.next()
	switch {
	case errors.Is(err, io.EOF) && lr.torn == 0:
		return session.Header{}, &CorruptError{Path: path, Line: 1, Err: errors.New("log is empty (no session header)")}
	case errors.Is(err, io.EOF), errors.Is(err, errLineTooLong):
		return session.Header{}, &CorruptError{Path: path, Line: 1, Err: errors.New("session header is truncated")}
	case err != nil:
		return session.Header{}, fmt.Errorf("read session log %s: %w", path, err)
	}
	h, err := decodeHeader(line, id)
	if err != nil {
		return session.Header{}, &CorruptError{Path: path, Line: 1, Err: err}
	}
	return h, nil
}
