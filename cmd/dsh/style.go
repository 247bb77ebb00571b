package main

import (
	"io"
	"regexp"
	"strings"
)

// Human output is coloured only on a terminal, and never when NO_COLOR is
// set to anything (no-color.org) or TERM is dumb; JSON and output piped to
// another program stay plain. Text from logs goes through host/termtext
// before any escape is added, so only dsh's own escapes reach the terminal.

// styler adds SGR escapes to text already made safe for a terminal.
type styler struct{ on bool }

// styleFor decides whether w gets colours.
func (g *globals) styleFor(w io.Writer) styler {
	return styler{on: isTerminal(w) && colorAllowed(g.env)}
}

// colorAllowed reads the conventions that switch colours off.
func colorAllowed(env func(string) (string, bool)) bool {
	if env == nil {
		return true
	}
	if v, ok := env("NO_COLOR"); ok && v != "" {
		return false
	}
	if v, _ := env("TERM"); v == "dumb" {
		return false
	}
	return true
}

const (
	sgrReset = "\x1b[0m"
	sgrBold  = "\x1b[1m"
	sgrDim   = "\x1b[2m"
	sgrID    = "\x1b[33m"   // yellow, as git shows commit ids
	sgrMatch = "\x1b[1;31m" // bold red, as grep shows matches
)

func (s styler) wrap(sgr, text string) string {
	if !s.on || text == "" {
		return text
	}
	return sgr + text + sgrReset
}

func (s styler) id(text string) string   { return s.wrap(sgrID, text) }
func (s styler) bold(text string) string { return s.wrap(sgrBold, text) }
func (s styler) dim(text string) string  { return s.wrap(sgrDim, text) }

// matches marks the words of query in text (case-insensitively), as the
// search found them. Without colours it returns text unchanged.
func (s styler) matches(text, query string) string {
	if !s.on {
		return text
	}
	var words []string
	for _, w := range strings.Fields(query) {
		words = append(words, regexp.QuoteMeta(w))
	}
	if len(words) == 0 {
		return text
	}
	re, err := regexp.Compile("(?i)" + strings.Join(words, "|"))
	if err != nil {
		return text
	}
	return re.ReplaceAllStringFunc(text, func(m string) string { return sgrMatch + m + sgrReset })
}
