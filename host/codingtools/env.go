package codingtools

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"
)

// EnvConfig is tools.bash.env: which of dsh's environment variables a bash
// command sees. Both lists hold variable names or shell patterns (AWS_*,
// *_TOKEN) separated by commas or spaces.
type EnvConfig struct {
	// Allow, when not empty, lists the only variables passed on.
	Allow string `mapstructure:"allow" json:"allow"`
	// Deny lists variables never passed on.
	Deny string `mapstructure:"deny" json:"deny"`
}

// CredentialEnv are the variables dsh itself may read its model key from.
// Whatever the config says, bash never sees them: a command's output goes
// to the session log, the search index and the model.
var CredentialEnv = []string{"DSH_LLM_API_KEY", "DEEPSEEK_API_KEY", "OPENAI_API_KEY"}

// envFilter decides which variables reach a bash command.
type envFilter struct {
	allow, deny []string // patterns
	hidden      []string // exact names, removed whatever allow says
}

func newEnvFilter(cfg EnvConfig, hidden []string) (envFilter, error) {
	allow, err := envPatterns("tools.bash.env.allow", cfg.Allow)
	if err != nil {
		return envFilter{}, err
	}
	deny, err := envPatterns("tools.bash.env.deny", cfg.Deny)
	if err != nil {
		return envFilter{}, err
	}
	f := envFilter{allow: allow, deny: deny}
	for _, h := range append(slices.Clone(CredentialEnv), hidden...) {
		if h != "" && !slices.Contains(f.hidden, h) {
			f.hidden = append(f.hidden, h)
		}
	}
	return f, nil
}

// envPatterns splits a list and checks each pattern.
func envPatterns(key, list string) ([]string, error) {
	fields, bad := envPatternList(list)
	if bad != "" {
		return nil, fmt.Errorf("%s: %q is not a valid name pattern (use names and * or ?, e.g. AWS_*)", key, bad)
	}
	return fields, nil
}

// envPatternList splits a list of names or patterns separated by commas or
// white space; bad is the first entry that is not a valid pattern.
func envPatternList(list string) (fields []string, bad string) {
	fields = strings.FieldsFunc(list, func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
	for _, p := range fields {
		if _, err := path.Match(p, ""); err != nil {
			return nil, p
		}
	}
	return fields, ""
}

// apply returns the entries of environ ("NAME=value") that a command may
// see. The result is never nil, so exec does not fall back to the whole
// environment.
func (f envFilter) apply(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if f.passes(name) {
			out = append(out, kv)
		}
	}
	return out
}

// removed returns the names a command must not see: the hidden ones and
// those of environ's entries that apply drops.
func (f envFilter) removed(environ []string) []string {
	out := slices.Clone(f.hidden)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !f.passes(name) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

func (f envFilter) passes(name string) bool {
	if slices.Contains(f.hidden, name) || matchesAny(f.deny, name) {
		return false
	}
	return len(f.allow) == 0 || matchesAny(f.allow, name)
}

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
