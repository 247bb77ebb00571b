package codingtools

import (
	"context"
	"crypto/sha256"
	"io"
	"os"

	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Files is how read, write and edit reach the files they work on. The disk
// (DiskFiles, through the call's confine.Access) is the default; a front
// end whose client holds the files' current text (an ACP editor's buffers)
// installs another for the calls of its sessions with WithFiles. The tools
// do not know which: they word every error the same way, and the
// read-before-edit record compares the Versions the implementation reports.
//
// Errors of Open and Create are those of confine.FS (fs.ErrNotExist,
// syscall.EISDIR, confine.ErrEscapes, ...) or, for a client that refused,
// an error whose message says so; the tools word them for the model.
type Files interface {
	// Open opens the existing file abs for the call, for mode.
	Open(ctx context.Context, call *tools.Call, abs string, mode OpenMode) (File, error)
	// Create creates the file abs, which must not exist (fs.ErrExist),
	// with data, creating missing parent directories first, and returns
	// the version written.
	Create(ctx context.Context, call *tools.Call, abs string, data []byte) (Version, error)
}

// OpenMode is what a call does with a file it opens.
type OpenMode int

const (
	// OpenRead reads the content.
	OpenRead OpenMode = iota
	// OpenWrite replaces the content without reading it.
	OpenWrite
	// OpenEdit reads the content, then replaces it.
	OpenEdit
)

// File is one call's open file. Every method refers to the file opened,
// whatever its name points at by now.
type File interface {
	// Info describes the file as opened on disk (its type and size).
	Info() os.FileInfo
	// Content returns a reader of the file's current text from its start;
	// the reader is valid until Close.
	Content(ctx context.Context) (io.Reader, error)
	// Version is the version of the content Content returns.
	Version(ctx context.Context) (Version, error)
	// Replace replaces the whole content with data and returns the version
	// written.
	Replace(ctx context.Context, data []byte) (Version, error)
	Close() error
}

// Version identifies one content of a file, for read-before-edit: a file
// on disk by its size and modification time, a client's buffer by a digest
// of its text. Versions are comparable with ==; two of different kinds
// never match.
type Version struct {
	size   int64
	mtime  int64 // Unix nanoseconds, on disk
	sum    [sha256.Size]byte
	buffer bool
}

// DiskVersion is the version of a file on disk as fi describes it.
func DiskVersion(fi os.FileInfo) Version {
	return Version{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

// TextVersion is the version of a buffer holding text.
func TextVersion(text []byte) Version {
	return Version{size: int64(len(text)), sum: sha256.Sum256(text), buffer: true}
}

// InBuffer reports whether v is the version of a client's buffer.
func (v Version) InBuffer() bool { return v.buffer }

type filesKey struct{}

// WithFiles returns ctx carrying f as the file access of the call whose
// body runs with ctx. Front ends install it through an Execute wrapper.
func WithFiles(ctx context.Context, f Files) context.Context {
	return context.WithValue(ctx, filesKey{}, f)
}

// filesFor is the file access of a call running with ctx.
func filesFor(ctx context.Context) Files {
	if f, ok := ctx.Value(filesKey{}).(Files); ok && f != nil {
		return f
	}
	return DiskFiles{}
}

// DiskFiles is the file access of the disk: every open goes through the
// call's confine.Access (Call.Access.FS), on the handle it opened.
type DiskFiles struct{}

// Open opens abs through the call's Access with the open flag of mode.
func (DiskFiles) Open(_ context.Context, call *tools.Call, abs string, mode OpenMode) (File, error) {
	flag := os.O_RDONLY
	switch mode {
	case OpenWrite:
		flag = os.O_WRONLY
	case OpenEdit:
		flag = os.O_RDWR
	}
	fsys := call.Access.FS()
	f, err := fsys.OpenFile(abs, flag)
	if err != nil {
		fsys.Close()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		fsys.Close()
		return nil, err
	}
	return &diskFile{fsys: fsys, f: f, fi: fi}, nil
}

// Create creates abs through the call's Access, mode 0644.
func (DiskFiles) Create(_ context.Context, call *tools.Call, abs string, data []byte) (Version, error) {
	fsys := call.Access.FS()
	defer fsys.Close()
	f, err := fsys.Create(abs, 0o644)
	if err != nil {
		return Version{}, err
	}
	fi, err := writeAll(f, data)
	if err != nil {
		return Version{}, err
	}
	return DiskVersion(fi), nil
}

// diskFile is a file opened on disk.
type diskFile struct {
	fsys *confine.FS
	f    *os.File
	fi   os.FileInfo
}

func (d *diskFile) Info() os.FileInfo { return d.fi }

func (d *diskFile) Content(context.Context) (io.Reader, error) {
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return d.f, nil
}

func (d *diskFile) Version(context.Context) (Version, error) { return DiskVersion(d.fi), nil }

// Replace rewrites the file in place, so it keeps its mode, owner and any
// links pointing at it.
func (d *diskFile) Replace(_ context.Context, data []byte) (Version, error) {
	if err := d.f.Truncate(0); err != nil {
		return Version{}, err
	}
	if _, err := d.f.WriteAt(data, 0); err != nil {
		return Version{}, err
	}
	fi, err := d.f.Stat()
	if err != nil {
		return Version{}, err
	}
	d.fi = fi
	return DiskVersion(fi), nil
}

func (d *diskFile) Close() error {
	err := d.f.Close()
	if cerr := d.fsys.Close(); err == nil {
		err = cerr
	}
	return err
}
