package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

const headerType = "session"

// maxSafeInteger is the largest integer a JavaScript reader of the same log
// represents exactly; upstream refuses larger header numbers.
const maxSafeInteger = 1<<53 - 1

// headerLine is the on-disk shape of line 1: "type" first, then the header
// fields in declaration order.
type headerLine struct {
	Type string `json:"type"`
	session.Header
}

// encodeHeader renders h as line 1 without its newline. delegationDepth is
// always written, as 0 when absent in memory.
func encodeHeader(h session.Header) ([]byte, error) {
	h = h.Clone()
	if h.DelegationDepth == nil {
		h.DelegationDepth = session.Ptr(0)
	}
	return session.Marshal(headerLine{Type: headerType, Header: h})
}

// decodeHeader parses and validates line 1.
func decodeHeader(line []byte) (session.Header, error) {
	if len(bytes.TrimSpace(line)) == 0 {
		return session.Header{}, errors.New("missing session header")
	}
	if !isObject(line) {
		return session.Header{}, errors.New("session header is not a JSON object")
	}
	var v struct {
		Type *string `json:"type"`
		session.Header
	}
	if err := json.Unmarshal(line, &v); err != nil {
		return session.Header{}, fmt.Errorf("invalid session header: %w", err)
	}
	if v.Type == nil || *v.Type != headerType {
		return session.Header{}, errors.New(`first line is not a session header (type must be "session")`)
	}
	if err := validateHeader(v.Header); err != nil {
		return session.Header{}, err
	}
	return v.Header, nil
}

// validateHeader applies the header rules of the store boundary
// (session-query.md §1.1) except the id-matches-location check, which the
// callers do because only they know the location.
func validateHeader(h session.Header) error {
	if h.Version != session.FormatVersion {
		return fmt.Errorf("unsupported session format version %d (this dsh reads version %d)", h.Version, session.FormatVersion)
	}
	if err := validateID(h.ID); err != nil {
		return err
	}
	if h.CreatedAt < 0 || h.CreatedAt > maxSafeInteger {
		return fmt.Errorf("createdAt %d is not a non-negative safe integer", h.CreatedAt)
	}
	if h.Cwd != nil && !filepath.IsAbs(*h.Cwd) {
		return fmt.Errorf("cwd %q is not an absolute path", *h.Cwd)
	}
	if h.SeedLength != nil && (*h.SeedLength < 0 || *h.SeedLength > maxSafeInteger) {
		return fmt.Errorf("seedLength %d is not a non-negative safe integer", *h.SeedLength)
	}
	if h.DelegationDepth != nil && (*h.DelegationDepth < 0 || *h.DelegationDepth > maxSafeInteger) {
		return fmt.Errorf("delegationDepth %d is not a non-negative safe integer", *h.DelegationDepth)
	}
	if h.Origin != nil && *h.Origin != "subagent" {
		return fmt.Errorf(`origin %q is not allowed (only "subagent")`, *h.Origin)
	}
	if h.Owner != nil && *h.Owner == "" {
		return errors.New("owner must be a non-empty string when present")
	}
	return nil
}

// maxIDLen keeps <id>/session.jsonl well inside NAME_MAX-limited components.
const maxIDLen = 200

// validateID refuses ids that cannot be used verbatim as one directory name:
// separators, NUL and control characters, and leading dots (which would hide
// the directory and collide with the store's own temporary files).
func validateID(id string) error {
	if id == "" {
		return errors.New("session id is empty")
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("session id is longer than %d bytes", maxIDLen)
	}
	if !utf8.ValidString(id) {
		return errors.New("session id is not valid UTF-8")
	}
	if id[0] == '.' {
		return fmt.Errorf("session id %q starts with a dot", id)
	}
	for _, r := range id {
		if r == '/' || r == '\\' || r < 0x20 || r == 0x7f {
			return fmt.Errorf("session id %q contains a path separator or control character", id)
		}
	}
	return nil
}

func isObject(line []byte) bool {
	t := bytes.TrimLeft(line, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}
