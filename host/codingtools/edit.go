package codingtools

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/lazyregexp"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const editDescription = "Replace exact text in an existing file. old_string must match the file literally, including whitespace and indentation, and must occur exactly once unless replace_all is true. " +
	"The file must have been read (or written) in this session and must not have changed on disk since. Do not include the line-number prefixes of read output in old_string or new_string."

type editArgs struct {
	FilePath   string  `json:"file_path"`
	OldString  *string `json:"old_string"`
	NewString  *string `json:"new_string"`
	ReplaceAll bool    `json:"replace_all"`
}

func (s *Set) editTool() *tools.Definition {
	return &tools.Definition{
		Name:        "edit",
		Description: editDescription,
		Parameters: tools.Object(
			tools.Req("file_path", tools.String("Path of the file, absolute or relative to the working directory.")),
			tools.Req("old_string", tools.String("The exact text to replace.")),
			tools.Req("new_string", tools.String("The replacement text; it must differ from old_string.")),
			tools.Field("replace_all", tools.Boolean("Replace every occurrence of old_string instead of requiring exactly one. Defaults to false.")),
		),
		Output:  tools.StringOutput,
		Effect:  tools.EffectWrite,
		Execute: s.edit,
		PresentCall: func(call *tools.Call) *tools.CallView {
			var a editArgs
			_ = decodeArgs(nameEdit, call, &a)
			v := &tools.CallView{Kind: tools.KindEdit, Title: "Edit", RawInput: rawInput(call)}
			abs, err := resolvePath(nameEdit, call, a.FilePath, "file_path")
			if err != nil {
				return v
			}
			v.Title = "Edit " + display(call, abs)
			loc := tools.FileLocation{Path: abs}
			if old, _, ok := previewText(abs); ok && a.OldString != nil && a.NewString != nil {
				if r, err := replace(old, *a.OldString, *a.NewString, a.ReplaceAll, maxPreviewBytes); err == nil {
					v.Diff = &tools.Diff{Path: abs, OldText: &old, NewText: r.text}
					loc.Line = r.lines[0]
				}
			}
			v.Locations = []tools.FileLocation{loc}
			return v
		},
		LoggedDiff: func(call *tools.Call) *tools.Diff {
			var a editArgs
			if decodeArgs(nameEdit, call, &a) != nil || a.OldString == nil || a.NewString == nil {
				return nil
			}
			abs, err := resolvePath(nameEdit, call, a.FilePath, "file_path")
			if err != nil {
				return nil
			}
			// The replaced text against its replacement: the rest of the
			// file as it was is not logged.
			return &tools.Diff{Path: abs, OldText: a.OldString, NewText: *a.NewString}
		},
	}
}

func (s *Set) edit(ctx context.Context, call *tools.Call) (any, error) {
	var a editArgs
	if err := decodeArgs(nameEdit, call, &a); err != nil {
		return nil, err
	}
	if a.OldString == nil || a.NewString == nil {
		return nil, failf(nameEdit, CodeInvalidArgs, "old_string and new_string are both required")
	}
	if *a.OldString == "" {
		return nil, failf(nameEdit, CodeInvalidArgs, "old_string is empty; give the exact text to replace, or use write to create a file")
	}
	if *a.OldString == *a.NewString {
		return nil, failf(nameEdit, CodeNoChange, "old_string and new_string are identical; there is nothing to change")
	}
	abs, err := resolvePath(nameEdit, call, a.FilePath, "file_path")
	if err != nil {
		return nil, err
	}
	shown := display(call, abs)
	f, err := openRegular(ctx, nameEdit, call, abs, OpenEdit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	version, err := f.Version(ctx)
	if err != nil {
		return nil, failf(nameEdit, CodeIO, "cannot read %s: %v", shown, unwrapPathError(err))
	}
	if err := s.checkFresh(nameEdit, "editing", call, abs, version); err != nil {
		return nil, err
	}
	limit := s.cfg.MaxFileBytes
	tooLarge := func() error {
		return failf(nameEdit, CodeTooLarge, "%s is larger than edit's limit of %s (tools.max_file_bytes); change it with a command through bash (sed, a script) instead",
			shown, byteSize(int64(limit)))
	}
	if version.size > int64(limit) {
		return nil, tooLarge()
	}
	content, err := f.Content(ctx)
	if err != nil {
		return nil, failf(nameEdit, CodeIO, "cannot read %s: %v", shown, unwrapPathError(err))
	}
	// Read one byte past the limit: a file on disk may have grown since.
	b, err := io.ReadAll(io.LimitReader(content, int64(limit)+1))
	if err != nil {
		return nil, failf(nameEdit, CodeIO, "cannot read %s: %v", shown, unwrapPathError(err))
	}
	if len(b) > limit {
		return nil, tooLarge()
	}
	if looksBinary(b[:min(len(b), sniffLen)]) {
		return nil, failf(nameEdit, CodeBinary, "%s is a binary file; edit only changes text files", shown)
	}
	r, err := replace(string(b), *a.OldString, *a.NewString, a.ReplaceAll, limit)
	if err != nil {
		return nil, editFailure(err, shown)
	}
	after, err := f.Replace(ctx, []byte(r.text))
	if err != nil {
		return nil, failf(nameEdit, CodeIO, "cannot write %s: %v", shown, unwrapPathError(err))
	}
	s.files.record(sessionKey(call), realPath(abs), after)
	n := len(r.lines)
	return fmt.Sprintf("Edited %s: replaced %d %s (%s %s).", shown, n, plural(n, "occurrence", "occurrences"),
		plural(n, "line", "lines"), lineList(r.lines, 10)), nil
}

// replacement is the outcome of a successful literal replacement.
type replacement struct {
	text  string
	lines []int // 1-based line of each replaced occurrence in the old text
}

// replaceError says why old could not be replaced; editFailure words it.
type replaceError struct {
	code    string
	matches []int // lines of the matches when not unique
	hint    string
	size    int // the size the text would have had, when too large
	limit   int
}

func (e *replaceError) Error() string { return e.code }

// replace substitutes new for old in text, unless the result would be longer
// than limit bytes. When the file uses CRLF line ends and old uses bare LF,
// both strings are converted first, because models reproduce file text with
// LF.
func replace(text, old, new string, all bool, limit int) (replacement, error) {
	n := strings.Count(text, old)
	if n == 0 && strings.Contains(text, "\r\n") && strings.Contains(old, "\n") && !strings.Contains(old, "\r") {
		crlfOld := strings.ReplaceAll(old, "\n", "\r\n")
		if c := strings.Count(text, crlfOld); c > 0 {
			old, new, n = crlfOld, strings.ReplaceAll(new, "\n", "\r\n"), c
		}
	}
	if n == 0 {
		return replacement{}, &replaceError{code: CodeNoMatch, hint: notFoundHint(text, old)}
	}
	lines := matchLines(text, old)
	if n > 1 && !all {
		return replacement{}, &replaceError{code: CodeNotUnique, matches: lines}
	}
	// Checked before building it: replace_all of a short string with a
	// long one multiplies the size.
	if size := len(text) + n*(len(new)-len(old)); size > limit {
		return replacement{}, &replaceError{code: CodeTooLarge, size: size, limit: limit}
	}
	return replacement{text: strings.ReplaceAll(text, old, new), lines: lines}, nil
}

func editFailure(err error, shown string) error {
	re, ok := err.(*replaceError)
	if !ok {
		return failf(nameEdit, CodeIO, "cannot edit %s: %v", shown, err)
	}
	switch re.code {
	case CodeTooLarge:
		return failf(nameEdit, CodeTooLarge, "the edit would make %s %d bytes, over edit's limit of %s (tools.max_file_bytes); make a smaller change, or make it with a command through bash",
			shown, re.size, byteSize(int64(re.limit)))
	case CodeNotUnique:
		return failf(nameEdit, CodeNotUnique, "old_string matches %d times in %s (lines %s); include more surrounding lines to make it unique, or set replace_all to true to change every occurrence",
			len(re.matches), shown, lineList(re.matches, 10))
	default:
		return failf(nameEdit, CodeNoMatch, "old_string was not found in %s. %s", shown, re.hint)
	}
}

// matchLines returns the 1-based line of each non-overlapping occurrence.
func matchLines(text, old string) []int {
	var out []int
	line, pos := 1, 0
	for {
		i := strings.Index(text[pos:], old)
		if i < 0 {
			return out
		}
		line += strings.Count(text[pos:pos+i], "\n")
		out = append(out, line)
		line += strings.Count(old, "\n")
		pos += i + len(old)
	}
}

func lineList(lines []int, max int) string {
	parts := make([]string, 0, min(len(lines), max)+1)
	for i, l := range lines {
		if i == max {
			parts = append(parts, fmt.Sprintf("and %d more", len(lines)-max))
			break
		}
		parts = append(parts, strconv.Itoa(l))
	}
	return strings.Join(parts, ", ")
}

var lineNumberPrefix = lazyregexp.New(`^\s*\d+: `)

// notFoundHint guesses why old did not match: copied line-number prefixes,
// or a block that matches except for whitespace.
func notFoundHint(text, old string) string {
	oldLines := strings.Split(old, "\n")
	prefixed := 0
	for _, l := range oldLines {
		if lineNumberPrefix.MatchString(l) {
			prefixed++
		}
	}
	if prefixed == len(oldLines) {
		return "old_string seems to include the \"N: \" line-number prefixes of read output; they are not part of the file, remove them"
	}
	if l := fuzzyLine(text, oldLines); l > 0 {
		return fmt.Sprintf("Text that differs only in whitespace or indentation starts at line %d; read the file again and copy old_string exactly", l)
	}
	return "It must match the file exactly, including whitespace and indentation; read the file again and copy the text to replace"
}

// fuzzyLine finds oldLines in text comparing lines with all whitespace
// collapsed and returns the 1-based start line, or 0.
func fuzzyLine(text string, oldLines []string) int {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	want := make([]string, 0, len(oldLines))
	for _, l := range oldLines {
		want = append(want, norm(l))
	}
	for len(want) > 0 && want[0] == "" {
		want = want[1:]
	}
	for len(want) > 0 && want[len(want)-1] == "" {
		want = want[:len(want)-1]
	}
	if len(want) == 0 {
		return 0
	}
	have := strings.Split(text, "\n")
	for i := 0; i+len(want) <= len(have); i++ {
		ok := true
		for j, w := range want {
			h := norm(have[i+j])
			if j == 0 || j == len(want)-1 {
				// The first and last lines may be partial in old_string.
				if !strings.Contains(h, w) {
					ok = false
					break
				}
			} else if h != w {
				ok = false
				break
			}
		}
		if ok {
			return i + 1
		}
	}
	return 0
}
