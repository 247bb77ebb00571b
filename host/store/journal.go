package store

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// The change journal, <root>/changes.log, lets a reader (the search index)
// learn which logs changed without stat-ing every log. It is only a hint:
// a record says "look at this id again"; the log itself is the truth. Writers
// append one record after every Create, successful Flush and repair; the
// journal is not fsynced, so after a machine crash a reader should List
// once at start-up and then follow the journal.
//
// Line 1 is a head record carrying a random epoch. Cursors are opaque: the
// byte offset of the next record in the low 39 bits and a 24-bit tag of the
// epoch above it, so a journal that was deleted and grew back past a
// reader's offset is still detected as a reset. Cursor 0 means "from the
// first record of whatever journal exists".
const (
	journalName  = "changes.log"
	journalMagic = "dsh-session-changes"
	offsetBits   = 39
	offsetMask   = 1<<offsetBits - 1
	tagMask      = 1<<24 - 1
)

// Change is one journal record.
type Change struct {
	ID   string `json:"id"`
	Path string `json:"path"`
	Size int64  `json:"size"`
}

type journalHead struct {
	Journal string `json:"journal"`
	Epoch   string `json:"epoch"`
}

func (s *Store) journalPath() string { return filepath.Join(s.root, journalName) }

// recordChange appends a record; a failure is logged, never returned, since
// the log write it describes has already succeeded.
func (s *Store) recordChange(id, path string, size int64) {
	rec, err := session.Marshal(Change{ID: id, Path: path, Size: size})
	if err == nil {
		err = s.appendJournal(append(rec, '\n'))
	}
	if err != nil {
		s.log.Warn("change journal not updated; search may miss this session until the next full listing",
			"journal", s.journalPath(), "session", id, "err", err)
	}
}

// errJournalNotRegular marks a journal path holding something other than a
// regular file (a directory, a FIFO, ...): nothing reads or writes it.
var errJournalNotRegular = errors.New("not a regular file")

// openJournal opens the journal without ever blocking: O_NONBLOCK makes
// opening a FIFO return at once (a plain open waits for the other end
// forever), and anything but a regular file is refused with an error that
// wraps errJournalNotRegular and says what to do.
func (s *Store) openJournal(flag int) (*os.File, os.FileInfo, error) {
	path := s.journalPath()
	f, err := os.OpenFile(path, flag|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		if fi, serr := os.Lstat(path); serr == nil && !fi.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("change journal %s is %s, %w; remove it (readers list all sessions once)", path, confine.Kind(fi.Mode()), errJournalNotRegular)
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("stat change journal: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("change journal %s is %s, %w; remove it (readers list all sessions once)", path, confine.Kind(fi.Mode()), errJournalNotRegular)
	}
	return f, fi, nil
}

func (s *Store) appendJournal(rec []byte) error {
	for range 2 {
		f, _, err := s.openJournal(os.O_WRONLY | os.O_APPEND)
		if errors.Is(err, fs.ErrNotExist) {
			if err := s.createJournal(); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		_, werr := f.Write(rec)
		return errors.Join(werr, f.Close())
	}
	return errors.New("change journal keeps disappearing")
}

// createJournal publishes a journal holding only its head line. Linking a
// finished temporary file makes concurrent creators agree on one epoch.
func (s *Store) createJournal() error {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	head, err := session.Marshal(journalHead{Journal: journalMagic, Epoch: hex.EncodeToString(b[:])})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.root, dirPerm); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.root, ".changes-*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	defer os.Remove(name)
	_, werr := tmp.Write(append(head, '\n'))
	if err := errors.Join(werr, tmp.Close()); err != nil {
		return err
	}
	if err := os.Link(name, s.journalPath()); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// Changes returns the records after cursor from (0 for the beginning) and
// the cursor to pass next time. A torn last record (a write in progress) is
// left for the next call. When the journal no longer continues from (it was
// deleted, truncated, replaced or holds a damaged record) the error is a
// JournalResetError whose Next is the current end: list every session again
// and follow from there.
func (s *Store) Changes(from int64) ([]Change, int64, error) {
	if from < 0 {
		return nil, 0, fmt.Errorf("change journal cursor %d is negative", from)
	}
	path := s.journalPath()
	f, fi, err := s.openJournal(os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) {
		if from == 0 {
			return nil, 0, nil
		}
		return nil, 0, &JournalResetError{Path: path, Next: 0, Reason: "the journal is missing"}
	}
	if errors.Is(err, errJournalNotRegular) {
		// Nothing can be followed: every call is a reset, so readers list
		// every session each time instead of missing changes.
		return nil, 0, &JournalResetError{Path: path, Next: 0, Reason: err.Error()}
	}
	if err != nil {
		return nil, from, fmt.Errorf("open change journal: %w", err)
	}
	defer f.Close()
	size := fi.Size()
	tag, body := readJournalHead(f, size)
	off := from & offsetMask
	reset := func(reason string) ([]Change, int64, error) {
		end := body + completeBytes(f, body, size)
		return nil, cursor(tag, end), &JournalResetError{Path: path, Next: cursor(tag, end), Reason: reason}
	}
	switch {
	case from != 0 && from>>offsetBits != tag:
		return reset("the journal was replaced")
	case off > size:
		return reset("the journal is shorter than the cursor")
	case off < body:
		if from != 0 {
			return reset("the cursor points into the journal head")
		}
		off = body
	}
	lr := newLineReader(io.NewSectionReader(f, off, size-off), 64<<10, maxJournalLine)
	var out []Change
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, errLineTooLong) {
			return reset(fmt.Sprintf("damaged record ending at offset %d", off+lr.complete-1))
		}
		if err != nil {
			return nil, from, fmt.Errorf("read change journal: %w", err)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		c, ok := decodeChange(line)
		if !ok {
			return reset(fmt.Sprintf("damaged record at offset %d", off+lr.complete-int64(len(line))-1))
		}
		out = append(out, c)
	}
	end := off + lr.complete
	if end > offsetMask {
		return nil, from, fmt.Errorf("change journal %s is larger than %d bytes; delete it (readers will list all sessions once)", path, int64(offsetMask))
	}
	return out, cursor(tag, end), nil
}

// ChangesHead returns the cursor at the journal's current end: a reader
// takes it, lists every session, then follows Changes from it.
func (s *Store) ChangesHead() (int64, error) {
	f, fi, err := s.openJournal(os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errJournalNotRegular) {
		// Changes resets from 0 on a journal that is not a regular file.
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("open change journal: %w", err)
	}
	defer f.Close()
	tag, body := readJournalHead(f, fi.Size())
	return cursor(tag, body+completeBytes(f, body, fi.Size())), nil
}

// readJournalHead returns the epoch tag and the offset of the first record.
// A journal without a head line (truncated in place) has tag 0 and records
// from offset 0.
func readJournalHead(r io.ReaderAt, size int64) (tag, body int64) {
	lr := newLineReader(io.NewSectionReader(r, 0, min(size, 4096)), 4096, 4096)
	line, err := lr.next()
	if err != nil {
		return 0, 0
	}
	var h journalHead
	if json.Unmarshal(line, &h) != nil || h.Journal != journalMagic || h.Epoch == "" {
		return 0, 0
	}
	sum := fnv.New32a()
	sum.Write([]byte(h.Epoch))
	tag = int64(sum.Sum32() & tagMask)
	return tag, lr.complete
}

// completeBytes counts the bytes from off up to the last newline before size.
func completeBytes(r io.ReaderAt, off, size int64) int64 {
	lr := newLineReader(io.NewSectionReader(r, off, size-off), 64<<10, maxJournalLine)
	for {
		if _, err := lr.next(); err != nil && !errors.Is(err, errLineTooLong) {
			return lr.complete
		}
	}
}

// maxJournalLine bounds a journal record: an id, a path and a size.
const maxJournalLine = 64 << 10

func cursor(tag, off int64) int64 { return tag<<offsetBits | off }

func decodeChange(line []byte) (Change, bool) {
	var v struct {
		ID   *string `json:"id"`
		Path *string `json:"path"`
		Size *int64  `json:"size"`
	}
	if !isObject(line) || json.Unmarshal(line, &v) != nil || v.ID == nil || *v.ID == "" || v.Path == nil || v.Size == nil {
		return Change{}, false
	}
	return Change{ID: *v.ID, Path: *v.Path, Size: *v.Size}, true
}
