package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

const headerType = "session"

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

// decodeHeader parses line 1 and validates it for the session id (the
// directory the log lives in).
func decodeHeader(line []byte, id string) (session.Header, error) {
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
	if err := validateHeader(v.Header, id); err != nil {
		return session.Header{}, err
	}
	return v.Header, nil
}

// validateHeader applies the header rules of the store boundary
// (session-query.md §1.1, session.ValidateHeader) for the session id, plus
// the store's own rule that the id is usable as a directory name.
func validateHeader(h session.Header, id string) error {
	if err := session.ValidateHeader(h, id); err != nil {
		return err
	}
	return validateID(h.ID)
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
