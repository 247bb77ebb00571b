package codingtools

import (
	"fmt"
	"reflect"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/outputdir"
)

// SectionPath is the tools' config section.
const SectionPath = "tools"

// Config is the "tools" config section, declared to host/config by
// ConfigSchema: its mapstructure tags are the keys, configs/default.yaml
// holds their defaults and docs, and the loader checks every value, so the
// plugin takes them as they come. The untagged fields are not config keys:
// their defaults are DefaultConfig's and only code (tests) changes them.
// The zero value is not useful; start from DefaultConfig and decode over it
// so that absent keys keep defaults.
type Config struct {
	// MaxFileBytes is the largest file edit changes and the largest content
	// write writes; both refuse more with a clear error rather than hold it.
	MaxFileBytes int          `mapstructure:"max_file_bytes"`
	Bash         BashConfig   `mapstructure:"bash"`
	Read         ReadConfig   `mapstructure:"read"`
	Search       SearchConfig `mapstructure:"search"`
}

// BashConfig is tools.bash.
type BashConfig struct {
	// DefaultTimeoutMs applies when a call gives no timeout_ms.
	DefaultTimeoutMs int `mapstructure:"default_timeout_ms"`
	// MaxTimeoutMs caps any requested timeout_ms.
	MaxTimeoutMs int `mapstructure:"max_timeout_ms"`
	// MaxOutputBytes is how much of the output's tail a result keeps inline.
	MaxOutputBytes int `mapstructure:"max_output_bytes"`
	// OutputDir receives the full text of truncated output. Empty means
	// this user's private directory under the system temp dir, shared by
	// every dsh process (outputdir.Default).
	OutputDir string
	// SavedOutput bounds the files holding that full text.
	SavedOutput SavedOutputConfig `mapstructure:"saved_output"`
	// KillGraceMs is how long a process group gets between SIGTERM and
	// SIGKILL, and how long background processes may keep the output open
	// after the command itself exited.
	KillGraceMs int
	// Env filters the environment commands see; dsh's credentials are
	// always removed (see CredentialEnv).
	Env EnvConfig `mapstructure:"env"`
}

// SavedOutputConfig is tools.bash.saved_output.
type SavedOutputConfig struct {
	// MaxBytes is the most of one command's output saved; past it the file
	// stops growing (the command keeps running) and the result says so.
	MaxBytes int `mapstructure:"max_bytes"`
	// KeepDays and KeepTotalBytes are the retention of saved output
	// (outputdir.Retention), applied before each new file is saved.
	KeepDays       int `mapstructure:"keep_days"`
	KeepTotalBytes int `mapstructure:"keep_total_bytes"`
}

// retention is the saved output's outputdir rule.
func (c SavedOutputConfig) retention() outputdir.Retention {
	return outputdir.Retention{MaxAge: time.Duration(c.KeepDays) * 24 * time.Hour, MaxBytes: int64(c.KeepTotalBytes)}
}

// ReadConfig is tools.read.
type ReadConfig struct {
	// DefaultLimit is the number of lines read when a call gives no limit.
	DefaultLimit int `mapstructure:"default_limit"`
	// MaxLineBytes cuts longer lines, with a marker saying how much was cut.
	MaxLineBytes int
	// MaxOutputBytes ends a window early, with a trailer saying where to
	// continue, so a file of huge lines cannot flood the context.
	MaxOutputBytes int
}

// SearchConfig is tools.search (glob and grep).
type SearchConfig struct {
	// MaxResults bounds the entries a glob or grep result lists.
	MaxResults int `mapstructure:"max_results"`
	// TimeoutMs is the cooperative budget glob and grep declare to a timeout
	// policy; it has no effect unless one is mounted.
	TimeoutMs int `mapstructure:"timeout_ms"`
}

// ConfigSchema declares the tools section: its keys' rules, including the
// largest timer the rest of the host accepts (2^31-1 ms), and that a call's
// default timeout cannot exceed the largest one it may ask for.
var ConfigSchema = config.Schema{
	Path: SectionPath,
	Type: reflect.TypeFor[Config](),
	Rules: map[string]config.Rule{
		"max_file_bytes":                     config.IntAtLeast(1),
		"bash.default_timeout_ms":            timerMs,
		"bash.max_timeout_ms":                timerMs,
		"bash.max_output_bytes":              config.IntAtLeast(1),
		"bash.saved_output.max_bytes":        config.IntAtLeast(1),
		"bash.saved_output.keep_days":        config.IntAtLeast(1),
		"bash.saved_output.keep_total_bytes": config.IntAtLeast(1),
		"bash.env.allow":                     namePatterns,
		"bash.env.deny":                      namePatterns,
		"read.default_limit":                 config.IntAtLeast(1),
		"search.max_results":                 config.IntAtLeast(1),
		"search.timeout_ms":                  timerMs,
	},
	Pairs: []config.Pair{{Low: "bash.default_timeout_ms", High: "bash.max_timeout_ms"}},
	// A project may size reads and searches; bash's limits, saved output
	// and environment stay the user's.
	Safe: []string{"read.default_limit", "search.max_results", "search.timeout_ms"},
}

// timerMs accepts a timeout in milliseconds a Go or JavaScript timer takes.
var timerMs = config.AllOf(config.IntAtLeast(1), config.IntAtMost(config.MaxTimerMs))

// namePatterns accepts a list of variable names or shell patterns (AWS_*)
// separated by commas or spaces.
func namePatterns(v any) string {
	if _, bad := envPatternList(v.(string)); bad != "" {
		return fmt.Sprintf("must list variable names or patterns such as AWS_* separated by commas (%q is not a valid pattern)", bad)
	}
	return ""
}

// DefaultConfig returns the defaults: the keys' from configs/default.yaml,
// the untagged fields' from here. It panics if the embedded file lacks the
// section, which the package's tests rule out.
func DefaultConfig() Config {
	var c Config
	if err := ConfigSchema.DecodeDefaults(&c); err != nil {
		panic(err)
	}
	c.Bash.KillGraceMs = 2000
	c.Read.MaxLineBytes = 2000
	c.Read.MaxOutputBytes = 100000
	return c
}

// validate checks the untagged fields, which no loader sees; the keys were
// checked by the loader against ConfigSchema.
func (c Config) validate() error {
	for _, ch := range []struct {
		name   string
		v, min int
	}{
		{"Bash.KillGraceMs", c.Bash.KillGraceMs, 1},
		{"Read.MaxLineBytes", c.Read.MaxLineBytes, 16},
		{"Read.MaxOutputBytes", c.Read.MaxOutputBytes, 1024},
	} {
		if ch.v < ch.min {
			return fmt.Errorf("codingtools: Config.%s must be at least %d (got %d)", ch.name, ch.min, ch.v)
		}
	}
	return nil
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
