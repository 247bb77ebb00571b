package searchindex

import (
	"path/filepath"
	"reflect"
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

// JournalModes returns the SQLite journal modes the index accepts.
func JournalModes() []string { return []string{"wal", "delete", "truncate", "persist"} }

// SectionPath is the session_query config section: the index's keys and
// the two of the session-query service it serves (host/sessionquery),
// declared here once, in the package whose Mount puts the two together.
const SectionPath = "session_query"

// Settings is the session_query section.
type Settings struct {
	Path                        string `mapstructure:"path"`
	OpenAt                      string `mapstructure:"open_at"`
	JournalMode                 string `mapstructure:"journal_mode"`
	ReadWindowMax               int    `mapstructure:"read_window_max"`
	PersistedInspectConcurrency int    `mapstructure:"persisted_inspect_concurrency"`
	DefaultLimit                int    `mapstructure:"default_limit"`
	MaxLimit                    int    `mapstructure:"max_limit"`
	SnippetChars                int    `mapstructure:"snippet_chars"`
}

// ConfigSchema declares the session_query section with the design's bounds
// (session-query.md §3.1). The loader checks them for the user, naming the
// key; Config.Validate and sessionquery.Config.Validate still check what
// they are handed, with the design's INVALID_CONFIG messages, since the
// design requires both services to refuse a bad config from any caller.
// path is resolved like every config path (":memory:" kept), and empty
// means session-query.db in dsh's home. A project cannot set any key: the
// path moves dsh's data, and the rest shapes a service the user runs for
// every workspace.
var ConfigSchema = config.Schema{
	Path: SectionPath,
	Type: reflect.TypeFor[Settings](),
	Rules: map[string]config.Rule{
		"open_at":                       config.OneOf(OpenAtStartup, OpenAtFirstSearch, OpenAtNever),
		"journal_mode":                  config.OneOf(JournalModes()...),
		"read_window_max":               config.IntAtLeast(0),
		"persisted_inspect_concurrency": config.IntIn(1, config.MaxSafeInteger),
		"default_limit":                 config.IntIn(1, maxLimitBound),
		"max_limit":                     config.IntIn(1, maxLimitBound),
		"snippet_chars":                 config.IntAtLeast(1),
	},
	Paths:    []string{"path"},
	Literals: map[string][]string{"path": {MemoryPath}},
	InHome:   map[string]string{"path": "session-query.db"},
	Pairs:    []config.Pair{{Low: "default_limit", High: "max_limit"}},
}

// ConfigFrom maps the session_query section onto the index's Config.
func ConfigFrom(s Settings) Config {
	return Config{
		Path:         s.Path,
		OpenAt:       s.OpenAt,
		JournalMode:  s.JournalMode,
		DefaultLimit: s.DefaultLimit,
		MaxLimit:     s.MaxLimit,
		SnippetChars: s.SnippetChars,
	}
}

// ServiceConfig maps the section's service keys onto the session-query
// service's Config.
func (s Settings) ServiceConfig() sessionquery.Config {
	return sessionquery.Config{ReadWindowMax: s.ReadWindowMax, PersistedInspectConcurrency: s.PersistedInspectConcurrency}
}

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
	// pageSize is the page size a new file gets (0: newPageSize); a
	// rebuild's file takes the live one's, which the copy needs.
	pageSize int
	// private is a rebuild's file, which no other process reads until it
	// is complete: it is made with incremental auto-vacuum (see
	// finishBuild) and keeps a large page cache (see growCache).
	private bool
	// resident is Options.Resident.
	resident bool
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
	case !slices.Contains(JournalModes(), c.JournalMode):
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
