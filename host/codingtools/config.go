package codingtools

import (
	"fmt"
	"time"

	"github.com/seed-e9b4dba4/dsh/host/outputdir"
)

// Config is the "tools" config section. The zero value is not useful; start
// from DefaultConfig and decode over it so that absent keys keep defaults.
type Config struct {
	// MaxFileBytes is the largest file edit changes and the largest content
	// write writes; both refuse more with a clear error rather than hold it.
	MaxFileBytes int          `mapstructure:"max_file_bytes" json:"max_file_bytes"`
	Bash         BashConfig   `mapstructure:"bash" json:"bash"`
	Read         ReadConfig   `mapstructure:"read" json:"read"`
	Search       SearchConfig `mapstructure:"search" json:"search"`
}

// BashConfig is tools.bash.
type BashConfig struct {
	// DefaultTimeoutMs applies when a call gives no timeout_ms.
	DefaultTimeoutMs int `mapstructure:"default_timeout_ms" json:"default_timeout_ms"`
	// MaxTimeoutMs caps any requested timeout_ms.
	MaxTimeoutMs int `mapstructure:"max_timeout_ms" json:"max_timeout_ms"`
	// MaxOutputBytes is how much of the output's tail a result keeps inline.
	MaxOutputBytes int `mapstructure:"max_output_bytes" json:"max_output_bytes"`
	// OutputDir receives the full text of truncated output. Empty means
	// this user's private directory under the system temp dir, shared by
	// every dsh process (outputdir.Default).
	OutputDir string `mapstructure:"output_dir" json:"output_dir"`
	// SavedOutput bounds the files holding that full text.
	SavedOutput SavedOutputConfig `mapstructure:"saved_output" json:"saved_output"`
	// KillGraceMs is how long a process group gets between SIGTERM and
	// SIGKILL, and how long background processes may keep the output open
	// after the command itself exited.
	KillGraceMs int `mapstructure:"kill_grace_ms" json:"kill_grace_ms"`
	// Env filters the environment commands see; dsh's credentials are
	// always removed (see CredentialEnv).
	Env EnvConfig `mapstructure:"env" json:"env"`
}

// SavedOutputConfig is tools.bash.saved_output.
type SavedOutputConfig struct {
	// MaxBytes is the most of one command's output saved; past it the file
	// stops growing (the command keeps running) and the result says so.
	MaxBytes int `mapstructure:"max_bytes" json:"max_bytes"`
	// KeepDays and KeepTotalBytes are the retention of saved output
	// (outputdir.Retention), applied before each new file is saved.
	KeepDays       int `mapstructure:"keep_days" json:"keep_days"`
	KeepTotalBytes int `mapstructure:"keep_total_bytes" json:"keep_total_bytes"`
}

// retention is the saved output's outputdir rule.
func (c SavedOutputConfig) retention() outputdir.Retention {
	return outputdir.Retention{MaxAge: time.Duration(c.KeepDays) * 24 * time.Hour, MaxBytes: int64(c.KeepTotalBytes)}
}

// ReadConfig is tools.read.
type ReadConfig struct {
	// DefaultLimit is the number of lines read when a call gives no limit.
	DefaultLimit int `mapstructure:"default_limit" json:"default_limit"`
	// MaxLineBytes cuts longer lines, with a marker saying how much was cut.
	MaxLineBytes int `mapstructure:"max_line_bytes" json:"max_line_bytes"`
	// MaxOutputBytes ends a window early, with a trailer saying where to
	// continue, so a file of huge lines cannot flood the context.
	MaxOutputBytes int `mapstructure:"max_output_bytes" json:"max_output_bytes"`
}

// SearchConfig is tools.search (glob and grep).
type SearchConfig struct {
	// MaxResults bounds the entries a glob or grep result lists.
	MaxResults int `mapstructure:"max_results" json:"max_results"`
	// TimeoutMs is the cooperative budget glob and grep declare to a timeout
	// policy; it has no effect unless one is mounted.
	TimeoutMs int `mapstructure:"timeout_ms" json:"timeout_ms"`
}

// DefaultConfig returns the defaults of configs/default.yaml.
func DefaultConfig() Config {
	return Config{
		MaxFileBytes: 10 << 20,
		Bash: BashConfig{
			DefaultTimeoutMs: 120000,
			MaxTimeoutMs:     600000,
			MaxOutputBytes:   30000,
			KillGraceMs:      2000,
			SavedOutput: SavedOutputConfig{
				MaxBytes:       100 << 20,
				KeepDays:       7,
				KeepTotalBytes: 1 << 30,
			},
		},
		Read: ReadConfig{
			DefaultLimit:   2000,
			MaxLineBytes:   2000,
			MaxOutputBytes: 100000,
		},
		Search: SearchConfig{
			MaxResults: 200,
			TimeoutMs:  30000,
		},
	}
}

// maxTimerMs is the largest timer the rest of the host accepts (2^31-1 ms).
const maxTimerMs = 2147483647

// Validate reports the first invalid value, naming its key.
func (c Config) Validate() error {
	checks := []struct {
		key string
		v   int
		min int
	}{
		{"tools.max_file_bytes", c.MaxFileBytes, 1},
		{"tools.bash.default_timeout_ms", c.Bash.DefaultTimeoutMs, 1},
		{"tools.bash.max_timeout_ms", c.Bash.MaxTimeoutMs, 1},
		{"tools.bash.max_output_bytes", c.Bash.MaxOutputBytes, 1},
		{"tools.bash.kill_grace_ms", c.Bash.KillGraceMs, 1},
		{"tools.bash.saved_output.max_bytes", c.Bash.SavedOutput.MaxBytes, 1},
		{"tools.bash.saved_output.keep_days", c.Bash.SavedOutput.KeepDays, 1},
		{"tools.bash.saved_output.keep_total_bytes", c.Bash.SavedOutput.KeepTotalBytes, 1},
		{"tools.read.default_limit", c.Read.DefaultLimit, 1},
		{"tools.read.max_line_bytes", c.Read.MaxLineBytes, 16},
		{"tools.read.max_output_bytes", c.Read.MaxOutputBytes, 1024},
		{"tools.search.max_results", c.Search.MaxResults, 1},
		{"tools.search.timeout_ms", c.Search.TimeoutMs, 1},
	}
	for _, ch := range checks {
		if ch.v < ch.min {
			return fmt.Errorf("%s must be at least %d (got %d)", ch.key, ch.min, ch.v)
		}
	}
	for _, ms := range []struct {
		key string
		v   int
	}{
		{"tools.bash.default_timeout_ms", c.Bash.DefaultTimeoutMs},
		{"tools.bash.max_timeout_ms", c.Bash.MaxTimeoutMs},
		{"tools.search.timeout_ms", c.Search.TimeoutMs},
	} {
		if ms.v > maxTimerMs {
			return fmt.Errorf("%s must be at most %d (got %d)", ms.key, maxTimerMs, ms.v)
		}
	}
	if c.Bash.DefaultTimeoutMs > c.Bash.MaxTimeoutMs {
		return fmt.Errorf("tools.bash.default_timeout_ms (%d) must not exceed tools.bash.max_timeout_ms (%d)",
			c.Bash.DefaultTimeoutMs, c.Bash.MaxTimeoutMs)
	}
	return nil
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
