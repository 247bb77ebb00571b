package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/codingtools"
	"github.com/seed-e9b4dba4/dsh/host/confine"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// A client that advertises fs.readTextFile and fs.writeTextFile holds the
// current text of the files it has open, saved or not: read, write and
// edit then go through fs/read_text_file and fs/write_text_file for the
// files of the session's workspace, so the model reads what the user sees
// and its edits land in the editor's buffers. Everything else stays on
// disk: files outside the workspace (or reached through a link leading out
// of it), files larger than maxBufferBytes, grep and glob.
//
// The disk still decides what a call may open: every file is first opened
// through the call's confine.Access, exactly as without a client, so the
// permission policy, the workspace confinement and the type checks are
// unchanged; only the text comes from the client. A read the client cannot
// serve (it answers an error) reads the disk instead; a write it refuses
// is the call's error. Read-before-edit compares digests of the text,
// whichever side served it.

// Bounds of the client's file system.
const (
	// maxBufferBytes is the largest text taken from or sent to a client;
	// larger files are read and written on disk. Under the 10 MiB frame
	// limit, with room for JSON escaping.
	maxBufferBytes = 4 << 20
	// clientFileTimeout bounds one fs/* request: an editor that does not
	// answer turns into a tool error instead of a stuck call.
	clientFileTimeout = 30 * time.Second
)

// clientFiles is the codingtools.Files of one session whose client serves
// files.
type clientFiles struct {
	conn        *sdk.AgentSideConnection
	session     string
	cwd         string
	read, write bool
	log         *slog.Logger
}

var _ codingtools.Files = (*clientFiles)(nil)

// serves reports whether the client handles abs: a path of the workspace,
// symbolic links resolved.
func (c *clientFiles) serves(abs string) bool {
	return c.cwd != "" && confine.Within(c.cwd, abs)
}

// Open opens abs on disk through the call's Access (for its checks and, if
// need be, its content); a workspace file's text then comes from the
// client.
func (c *clientFiles) Open(ctx context.Context, call *tools.Call, abs string, mode codingtools.OpenMode) (codingtools.File, error) {
	disk := codingtools.DiskFiles{}
	if !c.serves(abs) {
		return disk.Open(ctx, call, abs, mode)
	}
	diskMode := codingtools.OpenRead
	if mode != codingtools.OpenRead && !c.write {
		diskMode = codingtools.OpenEdit // written on disk, read for its digest
	}
	f, err := disk.Open(ctx, call, abs, diskMode)
	if err != nil {
		return nil, err
	}
	if f.Info().Size() > maxBufferBytes || !f.Info().Mode().IsRegular() {
		f.Close()
		return disk.Open(ctx, call, abs, mode)
	}
	return &clientFile{c: c, call: call, abs: abs, disk: f}, nil
}

// Create creates a workspace file through the client, after checking on
// disk (through the call's Access) that it does not exist and creating its
// missing parent directories there.
func (c *clientFiles) Create(ctx context.Context, call *tools.Call, abs string, data []byte) (codingtools.Version, error) {
	if !c.serves(abs) || !c.write || len(data) > maxBufferBytes {
		return codingtools.DiskFiles{}.Create(ctx, call, abs, data)
	}
	fsys := call.Access.FS()
	defer fsys.Close()
	if _, err := fsys.Stat(abs); err == nil {
		return codingtools.Version{}, &os.PathError{Op: "create", Path: abs, Err: os.ErrExist}
	} else if !errors.Is(err, os.ErrNotExist) {
		return codingtools.Version{}, err
	}
	if err := fsys.MkdirAll(filepath.Dir(abs)); err != nil {
		return codingtools.Version{}, err
	}
	if err := c.writeText(ctx, abs, data); err != nil {
		return codingtools.Version{}, err
	}
	return codingtools.TextVersion(data), nil
}

func (c *clientFiles) readText(ctx context.Context, abs string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, clientFileTimeout)
	defer cancel()
	resp, err := c.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(c.session), Path: abs})
	if err != nil {
		return nil, clientFailure("read", err)
	}
	if len(resp.Content) > maxBufferBytes {
		return nil, fmt.Errorf("the editor sent %d bytes, over the limit of %d", len(resp.Content), maxBufferBytes)
	}
	return []byte(resp.Content), nil
}

func (c *clientFiles) writeText(ctx context.Context, abs string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, clientFileTimeout)
	defer cancel()
	_, err := c.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(c.session), Path: abs, Content: string(data)})
	if err != nil {
		return clientFailure("write", err)
	}
	return nil
}

// clientFailure words an fs/* request that failed.
func clientFailure(verb string, err error) error {
	var re *sdk.RequestError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("the editor did not answer the request to %s the file within %s", verb, clientFileTimeout)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("the request to the editor to %s the file was cancelled", verb)
	case errors.As(err, &re):
		msg := re.Message
		if d, ok := re.Data.(map[string]any); ok {
			if s, ok := d["error"].(string); ok && s != "" {
				msg += ": " + s
			}
		}
		return fmt.Errorf("the editor could not %s the file (%s, code %d)", verb, msg, re.Code)
	}
	return fmt.Errorf("the editor could not %s the file: %v", verb, err)
}

// clientFile is a workspace file whose text the client serves; disk is
// the same file opened through the call's Access.
type clientFile struct {
	c    *clientFiles
	call *tools.Call
	abs  string
	disk codingtools.File

	text   []byte
	loaded bool
}

func (f *clientFile) Info() os.FileInfo { return f.disk.Info() }

// load fetches the text once: from the client, or from disk when the
// client cannot serve the file.
func (f *clientFile) load(ctx context.Context) error {
	if f.loaded {
		return nil
	}
	if f.c.read {
		text, err := f.c.readText(ctx, f.abs)
		if err == nil {
			if err := f.sameFile(); err != nil {
				return err
			}
			f.text, f.loaded = text, true
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		f.c.log.Debug("acp: the client did not serve a file; reading it on disk", "path", f.abs, "err", err)
	}
	r, err := f.disk.Content(ctx)
	if err != nil {
		return err
	}
	text, err := io.ReadAll(io.LimitReader(r, maxBufferBytes+1))
	if err != nil {
		return err
	}
	if len(text) > maxBufferBytes {
		return fmt.Errorf("the file grew past %d bytes while it was read", maxBufferBytes)
	}
	f.text, f.loaded = text, true
	return nil
}

// sameFile checks that the path still names the file that was opened (and
// checked) on disk, so a link swapped while the client read by name is
// caught.
func (f *clientFile) sameFile() error {
	fsys := f.call.Access.FS()
	defer fsys.Close()
	now, err := fsys.Stat(f.abs)
	if err != nil {
		return fmt.Errorf("the file changed while the editor read it: %w", err)
	}
	a, okA := confine.IDOf(now)
	b, okB := confine.IDOf(f.disk.Info())
	if !okA || !okB || a != b {
		return errors.New("the file was replaced while the editor read it; read it again")
	}
	return nil
}

func (f *clientFile) Content(ctx context.Context) (io.Reader, error) {
	if err := f.load(ctx); err != nil {
		return nil, err
	}
	return bytes.NewReader(f.text), nil
}

func (f *clientFile) Version(ctx context.Context) (codingtools.Version, error) {
	if err := f.load(ctx); err != nil {
		return codingtools.Version{}, err
	}
	return codingtools.TextVersion(f.text), nil
}

// Replace writes through the client, which applies the text to its buffer;
// a client that only reads gets the file written on disk.
func (f *clientFile) Replace(ctx context.Context, data []byte) (codingtools.Version, error) {
	switch {
	case f.c.write && len(data) > maxBufferBytes:
		return codingtools.Version{}, fmt.Errorf("the new text is %d bytes, over the %d bytes dsh sends the editor; make smaller changes with edit", len(data), maxBufferBytes)
	case f.c.write:
		if err := f.c.writeText(ctx, f.abs, data); err != nil {
			return codingtools.Version{}, err
		}
	default:
		if _, err := f.disk.Replace(ctx, data); err != nil {
			return codingtools.Version{}, err
		}
	}
	f.text, f.loaded = data, true
	return codingtools.TextVersion(data), nil
}

func (f *clientFile) Close() error { return f.disk.Close() }
