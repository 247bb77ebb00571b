package codingtools

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const readDescription = "Read a UTF-8 text file. Each line of the result is prefixed with its 1-based line number and a colon (\"12: text\"); the prefix is not part of the file. " +
	"Reads up to `limit` lines starting at line `offset`; a trailer says how to continue when more lines remain, or gives the total line count at the end of the file. " +
	"Very long lines are cut with a marker. Directories and binary files are rejected: use glob to list a directory."

type readArgs struct {
	FilePath string `json:"file_path"`
	Offset   optInt `json:"offset"`
	Limit    optInt `json:"limit"`
}

func (s *Set) readTool() *tools.Definition {
	return &tools.Definition{
		Name:        "read",
		Description: readDescription,
		Parameters: tools.Object(
			tools.Req("file_path", tools.String("Path of the file, absolute or relative to the working directory.")),
			tools.Field("offset", tools.Integer("First line to read, 1-based. Defaults to 1.")),
			tools.Field("limit", tools.Integer(fmt.Sprintf("Maximum number of lines to read. Defaults to %d.", s.cfg.Read.DefaultLimit))),
		),
		Output:          tools.StringOutput,
		Effect:          tools.EffectRead,
		Execute:         s.read,
		ConcurrencySafe: alwaysConcurrent,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a readArgs
			_ = decodeArgs(nameRead, call, &a)
			v := &tools.CallView{Kind: tools.KindRead, Title: "Read", RawInput: rawInput(call)}
			if abs, err := resolvePath(nameRead, call, a.FilePath, "file_path"); err == nil {
				v.Title = "Read " + display(call, abs)
				loc := tools.FileLocation{Path: abs}
				if a.Offset.set && a.Offset.v > 1 {
					loc.Line = int(a.Offset.v)
					v.Title += fmt.Sprintf(" (from line %d)", a.Offset.v)
				}
				v.Locations = []tools.FileLocation{loc}
			}
			return v
		},
	}
}

func (s *Set) read(ctx context.Context, call *tools.Call) (any, error) {
	var a readArgs
	if err := decodeArgs(nameRead, call, &a); err != nil {
		return nil, err
	}
	abs, err := resolvePath(nameRead, call, a.FilePath, "file_path")
	if err != nil {
		return nil, err
	}
	offset := int64(1)
	if a.Offset.set {
		if a.Offset.v < 0 {
			return nil, failf(nameRead, CodeInvalidArgs, "offset must be 1 or more (got %d)", a.Offset.v)
		}
		offset = max(1, a.Offset.v)
	}
	limit := int64(s.cfg.Read.DefaultLimit)
	if a.Limit.set {
		if a.Limit.v < 1 {
			return nil, failf(nameRead, CodeInvalidArgs, "limit must be 1 or more (got %d)", a.Limit.v)
		}
		limit = a.Limit.v
	}
	f, err := openRegular(ctx, nameRead, call, abs, OpenRead)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	content, err := f.Content(ctx)
	if err != nil {
		return nil, failf(nameRead, CodeIO, "cannot read %s: %v", display(call, abs), unwrapPathError(err))
	}
	version, err := f.Version(ctx)
	if err != nil {
		return nil, failf(nameRead, CodeIO, "cannot read %s: %v", display(call, abs), unwrapPathError(err))
	}
	sample := make([]byte, sniffLen)
	n, err := io.ReadFull(content, sample)
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, failf(nameRead, CodeIO, "cannot read %s: %v", display(call, abs), unwrapPathError(err))
	}
	if looksBinary(sample[:n]) {
		return nil, failf(nameRead, CodeBinary, "%s is a binary file (%d bytes); read only shows text. Inspect it with bash instead (for example `file` or `xxd | head`)", display(call, abs), f.Info().Size())
	}
	w, err := s.window(ctx, io.MultiReader(bytes.NewReader(sample[:n]), content), offset, limit)
	if err != nil {
		return nil, failf(nameRead, CodeIO, "cannot read %s: %v", display(call, abs), err)
	}
	if w.total == 0 && offset > 1 || w.total > 0 && offset > w.total {
		return nil, failf(nameRead, CodeOffsetOutOfRange, "offset %d is past the end of %s, which has %d lines; use an offset from 1 to %d", offset, display(call, abs), w.total, max(1, w.total))
	}
	s.files.record(sessionKey(call), realPath(abs), version)
	return w.render(offset), nil
}

// readWindow is the visible part of a file and what the trailer needs.
type readWindow struct {
	body   strings.Builder
	last   int64 // last line shown, 0 if none
	total  int64 // lines in the file
	capped bool  // the byte budget ended the window early
	budget int
}

func (s *Set) window(ctx context.Context, r io.Reader, offset, limit int64) (*readWindow, error) {
	w := &readWindow{budget: s.cfg.Read.MaxOutputBytes}
	lr := newLineReader(r, s.cfg.Read.MaxLineBytes)
	end := offset + limit - 1
	for {
		line, cut, ok := lr.next()
		if !ok {
			break
		}
		w.total++
		if w.total&0xffff == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if w.total < offset || w.total > end || w.capped {
			continue
		}
		entry := strconv.FormatInt(w.total, 10) + ": " + string(line)
		if cut > 0 {
			entry += fmt.Sprintf(" …[line cut: %d more bytes]", cut)
		}
		if w.last > 0 && w.body.Len()+len(entry)+1 > w.budget {
			w.capped = true
			lr.keep = 0
			continue
		}
		w.body.WriteString(entry)
		w.body.WriteByte('\n')
		w.last = w.total
		if w.total == end {
			lr.keep = 0 // past the window only the line count matters
		}
	}
	return w, lr.err
}

func (w *readWindow) render(offset int64) string {
	if w.total == 0 {
		return "(Empty file - 0 lines)"
	}
	var b strings.Builder
	b.WriteString(w.body.String())
	b.WriteByte('\n')
	switch {
	case w.last == w.total:
		fmt.Fprintf(&b, "(End of file - total %d lines)", w.total)
	case w.capped:
		fmt.Fprintf(&b, "(Showing lines %d-%d of %d; output limit of %d bytes reached. Use offset %d to continue.)", offset, w.last, w.total, w.budget, w.last+1)
	default:
		fmt.Fprintf(&b, "(Showing lines %d-%d of %d. Use offset %d to continue.)", offset, w.last, w.total, w.last+1)
	}
	return b.String()
}
