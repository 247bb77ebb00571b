package replay

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/session"
)

// A scripted string may contain {{fromRequest:<regex>}}: it is replaced by
// the first capture group (or the whole match) of the regex's last match in
// the live request's message text. Scripts use it for values no fixture can
// know in advance, such as a path under a generated workspace. The last two
// braces of a run of closing braces end the placeholder, so a pattern may
// itself end in a quantifier like {4}.
const (
	placeholderOpen  = "{{fromRequest:"
	placeholderClose = "}}"
)

type placeholder struct {
	start, end int // byte span of the whole placeholder
	pattern    string
}

func findPlaceholders(s string) ([]placeholder, error) {
	var out []placeholder
	cursor := 0
	for {
		open := strings.Index(s[cursor:], placeholderOpen)
		if open < 0 {
			return out, nil
		}
		open += cursor
		body := open + len(placeholderOpen)
		rel := strings.Index(s[body:], placeholderClose)
		if rel < 0 {
			return nil, fmt.Errorf("unterminated fromRequest placeholder in %q", s)
		}
		close := body + rel
		for close+len(placeholderClose) < len(s) && s[close+len(placeholderClose)] == '}' {
			close++
		}
		out = append(out, placeholder{start: open, end: close + len(placeholderClose), pattern: s[body:close]})
		cursor = close + len(placeholderClose)
	}
}

// substitute resolves every placeholder of s against corpus.
func substitute(s, corpus string) (string, error) {
	ps, err := findPlaceholders(s)
	if err != nil || len(ps) == 0 {
		return s, err
	}
	var sb strings.Builder
	prev := 0
	for _, p := range ps {
		re, err := regexp.Compile(p.pattern)
		if err != nil {
			return "", fmt.Errorf("fromRequest pattern %q is invalid: %w", p.pattern, err)
		}
		matches := re.FindAllStringSubmatchIndex(corpus, -1)
		if len(matches) == 0 {
			return "", fmt.Errorf("fromRequest pattern %q matched nothing in the request", p.pattern)
		}
		last := matches[len(matches)-1]
		value := corpus[last[0]:last[1]]
		if len(last) >= 4 && last[2] >= 0 {
			value = corpus[last[2]:last[3]]
		}
		sb.WriteString(s[prev:p.start])
		sb.WriteString(value)
		prev = p.end
	}
	sb.WriteString(s[prev:])
	return sb.String(), nil
}

// checkPlaceholders validates an entry's placeholders when it is loaded, so
// a broken pattern fails at start-up rather than mid-scenario.
func checkPlaceholders(e entry) error {
	return eachString(&e, func(s *string) error {
		ps, err := findPlaceholders(*s)
		for _, p := range ps {
			if _, cerr := regexp.Compile(p.pattern); cerr != nil {
				return fmt.Errorf("fromRequest pattern %q is invalid: %w", p.pattern, cerr)
			}
		}
		return err
	})
}

// resolve returns e with its placeholders resolved against the request
// messages; e itself is never modified.
func resolve(e entry, messages []session.Message) (entry, error) {
	has := false
	_ = eachString(&e, func(s *string) error {
		has = has || strings.Contains(*s, placeholderOpen)
		return nil
	})
	if !has {
		return e, nil
	}
	corpus := corpusOf(messages)
	c := cloneEntry(e)
	err := eachString(&c, func(s *string) error {
		v, err := substitute(*s, corpus)
		*s = v
		return err
	})
	return c, err
}

// corpusOf is the request's message text: text, reasoning, tool-call
// arguments and tool-result text in order, one piece per line.
func corpusOf(messages []session.Message) string {
	var parts []string
	var walk func([]session.ContentBlock)
	walk = func(blocks []session.ContentBlock) {
		for _, b := range blocks {
			switch b.Type {
			case session.BlockText, session.BlockReasoning:
				parts = append(parts, b.Text)
			case session.BlockToolCall:
				parts = append(parts, b.Arguments)
			case session.BlockToolResult:
				walk(b.Content)
			}
		}
	}
	for _, m := range messages {
		walk(m.Content)
	}
	return strings.Join(parts, "\n")
}

// eachString visits every scripted string of e in place.
func eachString(e *entry, fn func(*string) error) error {
	for _, s := range []*string{&e.message, &e.code, &e.readyFile} {
		if err := fn(s); err != nil {
			return err
		}
	}
	var block func(b *session.ContentBlock) error
	block = func(b *session.ContentBlock) error {
		for _, s := range []*string{&b.Text, &b.ID, &b.Name, &b.Arguments, &b.ToolCallID} {
			if err := fn(s); err != nil {
				return err
			}
		}
		for i := range b.Content {
			if err := block(&b.Content[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range e.chunks {
		c := &e.chunks[i]
		for _, s := range []*string{&c.Delta, &c.ID, &c.Name, &c.ArgumentsDelta} {
			if err := fn(s); err != nil {
				return err
			}
		}
		if c.Block != nil {
			if err := block(c.Block); err != nil {
				return err
			}
		}
		if c.Failure != nil {
			for _, s := range []*string{&c.Failure.Message, &c.Failure.Code, &c.Failure.RequestID} {
				if err := fn(s); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// cloneEntry deep-copies the chunks of e so substitution cannot touch the
// script.
func cloneEntry(e entry) entry {
	c := e
	c.chunks = make([]llm.Chunk, len(e.chunks))
	for i, ch := range e.chunks {
		if ch.Block != nil {
			b := ch.Block.Clone()
			ch.Block = &b
		}
		if ch.Failure != nil {
			f := *ch.Failure
			ch.Failure = &f
		}
		if ch.Usage != nil {
			u := *ch.Usage
			ch.Usage = &u
		}
		c.chunks[i] = ch
	}
	return c
}
