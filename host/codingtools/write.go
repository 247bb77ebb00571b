package codingtools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const writeDescription = "Create a file or replace its entire content. Missing parent directories are created. " +
	"An existing file must have been read in this session first, and must not have changed on disk since; prefer edit for targeted changes to an existing file."

type writeArgs struct {
	FilePath string  `json:"file_path"`
	Content  *string `json:"content"`
}

func (s *Set) writeTool() *tools.Definition {
	return &tools.Definition{
		Name:        "write",
		Description: writeDescription,
		Parameters: tools.Object(
			tools.Req("file_path", tools.String("Path of the file, absolute or relative to the working directory.")),
			tools.Req("content", tools.String("The complete new content of the file.")),
		),
		Output:  tools.StringOutput,
		Effect:  tools.EffectWrite,
		Execute: s.write,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a writeArgs
			_ = decodeArgs(nameWrite, call, &a)
			v := &tools.CallView{Kind: tools.KindEdit, Title: "Write", RawInput: rawInput(call)}
			abs, err := resolvePath(nameWrite, call, a.FilePath, "file_path")
			if err != nil {
				return v
			}
			v.Title = "Write " + display(call, abs)
			v.Locations = []tools.FileLocation{{Path: abs}}
			if a.Content == nil {
				return v
			}
			old, exists, ok := previewText(abs)
			switch {
			case !exists:
				v.Diff = &tools.Diff{Path: abs, NewText: *a.Content}
			case ok:
				v.Diff = &tools.Diff{Path: abs, OldText: &old, NewText: *a.Content}
			}
			return v
		},
		LoggedDiff: func(call *tools.Call) *tools.Diff {
			var a writeArgs
			if decodeArgs(nameWrite, call, &a) != nil || a.Content == nil {
				return nil
			}
			abs, err := resolvePath(nameWrite, call, a.FilePath, "file_path")
			if err != nil {
				return nil
			}
			// What the file held before is not logged: the diff shows the
			// content written.
			return &tools.Diff{Path: abs, NewText: *a.Content}
		},
	}
}

func (s *Set) write(ctx context.Context, call *tools.Call) (any, error) {
	var a writeArgs
	if err := decodeArgs(nameWrite, call, &a); err != nil {
		return nil, err
	}
	if a.Content == nil {
		return nil, failf(nameWrite, CodeInvalidArgs, "content is required; pass the complete new content of the file")
	}
	abs, err := resolvePath(nameWrite, call, a.FilePath, "file_path")
	if err != nil {
		return nil, err
	}
	shown := display(call, abs)
	if n := len(*a.Content); n > s.cfg.MaxFileBytes {
		return nil, failf(nameWrite, CodeTooLarge, "content for %s is %d bytes, over write's limit of %s (tools.max_file_bytes); produce a file this large with a command through bash instead",
			shown, n, byteSize(int64(s.cfg.MaxFileBytes)))
	}
	data := []byte(*a.Content)
	verb := "Wrote"
	var after Version
	f, err := filesFor(ctx).Open(ctx, call, abs, OpenWrite)
	switch {
	case err == nil:
		err = checkRegular(nameWrite, call, abs, f.Info())
		var now Version
		if err == nil {
			if now, err = f.Version(ctx); err != nil {
				err = failf(nameWrite, CodeIO, "cannot read %s: %v", shown, unwrapPathError(err))
			}
		}
		if err == nil {
			err = s.checkFresh(nameWrite, "overwriting", call, abs, now)
		}
		if err == nil {
			if after, err = f.Replace(ctx, data); err != nil {
				err = failf(nameWrite, CodeIO, "cannot write %s: %v", shown, unwrapPathError(err))
			}
		}
		f.Close()
		if err != nil {
			return nil, err
		}
	case errors.Is(err, fs.ErrNotExist):
		verb = "Created"
		if after, err = filesFor(ctx).Create(ctx, call, abs, data); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, failf(nameWrite, CodeChangedOnDisk, "%s was created by someone else meanwhile; read it before overwriting it", shown)
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil, failf(nameWrite, CodeIO, "cannot create %s: %v", shown, unwrapPathError(err))
			}
			return nil, fileFailure(nameWrite, call, abs, err)
		}
	default:
		return nil, fileFailure(nameWrite, call, abs, err)
	}
	s.files.record(sessionKey(call), realPath(abs), after)
	lines := countLines(*a.Content)
	return fmt.Sprintf("%s %s (%d %s, %d %s).", verb, shown, lines, plural(lines, "line", "lines"), len(data), plural(len(data), "byte", "bytes")), nil
}
