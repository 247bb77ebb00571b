package searchindex

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// OpenAt values: when the index database is opened.
const (
	OpenAtStartup     = "startup"
	OpenAtFirstSearch = "first-search"
	OpenAtNever       = "never"
)

// MemoryPath keeps the whole index in memory (nothing on disk).
const MemoryPath = ":memory:"

// maxLimitBound is the largest page size a request may carry: JavaScript's
// MAX_SAFE_INTEGER minus one, so that limit+1 stays a safe integer.
const maxLimitBound = 1<<53 - 2

// Config configures the SQLite index (session-query.md §3.1).
type Config struct {
	// Path is the dedicated, disposable index database, or ":memory:".
	// Relative paths are made absolute by Validate's caller (Normalize).
	Path string
	// OpenAt is "startup", "first-search" or "never".
	OpenAt string
	// JournalMode is "wal", "delete", "truncate" or "persist". Several
	// processes sharing one index need "wal".
	JournalMode string
	// DefaultLimit is the page size of a request without a limit.
	DefaultLimit int
	// MaxLimit is the largest page size a request may ask for.
	MaxLimit int
	// SnippetChars bounds a snippet, in Unicode code points.
	SnippetChars int
}

// DefaultConfig returns the documented defaults for path.
func DefaultConfig(path string) Config {
	return Config{
		Path:         path,
		OpenAt:       OpenAtStartup,
		JournalMode:  "wal",
		DefaultLimit: 20,
		MaxLimit:     100,
		SnippetChars: 240,
	}
}

// Normalize returns c with Path made absolute (":memory:" is kept).
func (c Config) Normalize() Config {
	if strings.TrimSpace(c.Path) == "" || c.Path == MemoryPath {
		return c
	}
	if abs, err := filepath.Abs(c.Path); err == nil {
		c.Path = abs
	}
	return c
}

// Validate reports the first invalid setting as INVALID_CONFIG with the
// "session-search SQLite config: " prefix.
func (c Config) Validate() error {
	switch {
	case strings.TrimSpace(c.Path) == "":
		return invalidConfig("path must not be blank")
	case c.Path != MemoryPath && !filepath.IsAbs(c.Path):
		return invalidConfig("path must be absolute or \":memory:\"")
	case c.OpenAt != OpenAtStartup && c.OpenAt != OpenAtFirstSearch && c.OpenAt != OpenAtNever:
		return invalidConfig("openAt is not supported")
	case !slices.Contains(config.JournalModes(), c.JournalMode):
		return invalidConfig("journalMode is not supported")
	case c.DefaultLimit < 1 || c.DefaultLimit > maxLimitBound:
		return invalidConfig("defaultLimit must be an integer between 1 and 9007199254740990")
	case c.MaxLimit < 1 || c.MaxLimit > maxLimitBound:
		return invalidConfig("maxLimit must be an integer between 1 and 9007199254740990")
	case c.SnippetChars < 1:
		return invalidConfig("snippetChars must be a positive integer")
	case c.DefaultLimit > c.MaxLimit:
		return invalidConfig("defaultLimit must be less than or equal to maxLimit")
	}
	return nil
}

func invalidConfig(detail string) error {
	return sessionquery.Errorf(sessionquery.CodeInvalidConfig, "session-search SQLite config: %s", detail)
}
