package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"sync"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// Extent is how much of a log one read consumed, so that a later read can
// take only what was appended since (ReadAppended) instead of the whole
// log. Writers of this store only ever append complete lines after the
// last complete one (a repair cuts a torn tail, never a complete line), so
// while the file is the same one (device and inode) and the bytes just
// before Bytes are unchanged (Tail), the lines before Bytes are the lines
// that read decoded. A log rewritten in place behind dsh's back with the
// same tail is not told apart; Verify (a full read) still finds it.
type Extent struct {
	Dev, Ino uint64
	Bytes    int64  // offset just past the last complete line read
	Events   int    // events those lines hold (the file's, no synthetic closers)
	Tail     uint64 // FNV-1a of the tailBytes before Bytes (fewer in a shorter log)
	// Open reports that the last turn read has a turn/start and no
	// turn/end yet: whether a reader that finds no writer must add a
	// repair's closers depends on it.
	Open bool
	// Recovered reports that the read added a crash repair's closers,
	// which are not in the file: nothing can be appended to such a read.
	Recovered bool
}

// tailBytes is how much of a log before an extent's end its Tail hashes.
const tailBytes = 4096

// tailBuffers hold what tailHash reads: a build hashes every log's tail.
var tailBuffers = sync.Pool{New: func() any { return new([tailBytes]byte) }}

// ErrNotAppended reports that a log is not the one an extent was read
// from plus appended lines (another file, shorter, a changed tail, a read
// with synthetic closers, a line referring to deltas before the extent, or
// an open turn whose writer is gone): read the whole log instead.
var ErrNotAppended = errors.New("the log was not only appended to since the extent was read")

// extentVersion prefixes an encoded extent, so a format change is an
// unknown extent (a whole read) rather than a misread one.
const extentVersion = 1

// Encode renders the extent compactly for storage (DecodeExtent reads it).
func (x Extent) Encode() []byte {
	b := make([]byte, 0, 48)
	b = append(b, extentVersion)
	b = binary.AppendUvarint(b, x.Dev)
	b = binary.AppendUvarint(b, x.Ino)
	b = binary.AppendUvarint(b, uint64(x.Bytes))
	b = binary.AppendUvarint(b, uint64(x.Events))
	b = binary.LittleEndian.AppendUint64(b, x.Tail)
	var flags byte
	if x.Open {
		flags |= 1
	}
	if x.Recovered {
		flags |= 2
	}
	return append(b, flags)
}

// DecodeExtent reads an encoded extent; ok is false for anything Encode
// of this version did not produce.
func DecodeExtent(b []byte) (x Extent, ok bool) {
	if len(b) == 0 || b[0] != extentVersion {
		return Extent{}, false
	}
	b = b[1:]
	var vals [4]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return Extent{}, false
		}
		vals[i], b = v, b[n:]
	}
	if len(b) != 9 || vals[2] > 1<<62 || vals[3] > 1<<31 {
		return Extent{}, false
	}
	x = Extent{Dev: vals[0], Ino: vals[1], Bytes: int64(vals[2]), Events: int(vals[3]),
		Tail: binary.LittleEndian.Uint64(b), Open: b[8]&1 != 0, Recovered: b[8]&2 != 0}
	return x, true
}

// InspectExtent is InspectRecovered also returning the extent of what it
// read.
func (s *Store) InspectExtent(ctx context.Context, id string) (session.Header, []session.Event, Extent, error) {
	if err := ctx.Err(); err != nil {
		return session.Header{}, nil, Extent{}, err
	}
	path, err := s.logPath(id)
	if err != nil {
		return session.Header{}, nil, Extent{}, err
	}
	f, fi, err := s.openLog(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return session.Header{}, nil, Extent{}, s.notFound(id)
	}
	if err != nil {
		return session.Header{}, nil, Extent{}, err
	}
	defer f.Close()
	d, err := readLog(ctx, f, fi.Size(), path, id)
	if err != nil {
		return session.Header{}, nil, Extent{}, err
	}
	x := Extent{Bytes: d.complete, Events: len(d.events), Open: turnOpen(false, d.events)}
	x.Dev, x.Ino = fileID(fi)
	if x.Tail, err = tailHash(f, d.complete); err != nil {
		return session.Header{}, nil, Extent{}, fmt.Errorf("read session log %s: %w", path, err)
	}
	// Whether a writer runs is asked only of a log whose last turn is
	// open: it reads the session's lock record, a file more per log.
	events := d.events
	if closers := closeOpenTurn(id, events); len(closers) > 0 && !s.WriterRunning(path) {
		events = append(events, closers...)
		x.Recovered = true
	}
	return d.header, events, x, nil
}

// ReadAppended reads the events appended to id's log since the read that
// returned from, numbered on from its events, and the extent of the log
// now. It fails with ErrNotAppended when it cannot tell that the log is
// that read plus appended lines, or when a whole read would add a repair's
// closers; the caller then reads the whole log (InspectExtent), which also
// reports any damage in the new lines.
func (s *Store) ReadAppended(ctx context.Context, id string, from Extent) ([]session.Event, Extent, error) {
	if err := ctx.Err(); err != nil {
		return nil, Extent{}, err
	}
	if from.Recovered {
		return nil, Extent{}, ErrNotAppended
	}
	path, err := s.logPath(id)
	if err != nil {
		return nil, Extent{}, err
	}
	f, fi, err := s.openLog(path, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, Extent{}, s.notFound(id)
	}
	if err != nil {
		return nil, Extent{}, err
	}
	defer f.Close()
	dev, ino := fileID(fi)
	if dev != from.Dev || ino != from.Ino || fi.Size() < from.Bytes {
		return nil, Extent{}, ErrNotAppended
	}
	if tail, err := tailHash(f, from.Bytes); err != nil {
		return nil, Extent{}, fmt.Errorf("read session log %s: %w", path, err)
	} else if tail != from.Tail {
		return nil, Extent{}, ErrNotAppended
	}
	size := fi.Size() - from.Bytes
	// Appended lines are usually few: a buffer sized to them costs less
	// than one of logReaders would when the pool is empty, as it is in a
	// process that only catches up.
	lr := newLineReader(io.NewSectionReader(f, from.Bytes, size), int(min(size+1, readBufferSize)), MaxEventBytes)
	// Deltas are restored from the events before a line; the ones before
	// the extent were not read, so a line that needs their deltas fails to
	// decode and the whole log is read instead. Nothing here is sized by
	// the events before the extent: the cost is the appended lines'.
	var events []session.Event
	for n := 0; ; n++ {
		if n%4096 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, Extent{}, err
			}
		}
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Extent{}, ErrNotAppended
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if events, err = appendLine(events, line, from.Events+len(events)); err != nil {
			return nil, Extent{}, ErrNotAppended
		}
	}
	x := Extent{Dev: dev, Ino: ino, Bytes: from.Bytes + lr.complete, Events: from.Events + len(events), Open: turnOpen(from.Open, events)}
	if x.Tail, err = tailHash(f, x.Bytes); err != nil {
		return nil, Extent{}, fmt.Errorf("read session log %s: %w", path, err)
	}
	if x.Open && x.Events > 0 && !s.WriterRunning(path) {
		return nil, Extent{}, ErrNotAppended
	}
	return events, x, nil
}

// turnOpen is whether the last turn is open after events, given whether
// it was before them (closeOpenTurn's rule: the later of the last
// turn/start and the last turn/end decides).
func turnOpen(open bool, events []session.Event) bool {
	for i := len(events) - 1; i >= 0; i-- {
		switch events[i].Type {
		case session.TypeTurnEnd:
			return false
		case session.TypeTurnStart:
			return true
		}
	}
	return open
}

// tailHash hashes the tailBytes of r before end.
func tailHash(r io.ReaderAt, end int64) (uint64, error) {
	start := max(0, end-tailBytes)
	tail := tailBuffers.Get().(*[tailBytes]byte)
	defer tailBuffers.Put(tail)
	buf := tail[:end-start]
	if _, err := r.ReadAt(buf, start); err != nil && !(errors.Is(err, io.EOF) && len(buf) == 0) {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(buf)
	return h.Sum64(), nil
}

func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino
	}
	return 0, 0
}
