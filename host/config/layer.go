package config

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// setting is one key's value as one layer states it.
type setting struct {
	value   any    // string, int64, float64 or bool, already validated
	origin  string // what Config.Origin reports
	source  string // what errors name
	baseDir string // relative paths in value resolve against it
	rank    int    // layer precedence; higher wins
}

// layer is every key one source sets.
type layer map[string]setting

// provenance describes a whole source; env and flag layers vary it per key.
type provenance struct {
	origin, source, baseDir string
	rank                    int
	// builtin marks dsh's own embedded files (the defaults and the shipped
	// profiles). They carry the sections of every plugin dsh has; a Load
	// that registers no such section skips them there instead of failing.
	builtin bool
}

func (p provenance) set(l layer, key string, v any) {
	l[key] = setting{value: v, origin: p.origin, source: p.source, baseDir: p.baseDir, rank: p.rank}
}

// Layer ranks, lowest precedence first.
const (
	rankDefault = iota
	rankProfile
	rankUser
	rankProject
	rankConfigFile
	rankEnv
	rankFlag
)

// parseYAML reads a YAML document into a layer, checking every key against
// the schema and every value against its type and rule. Keys with an empty
// (null) value are left to lower layers.
func (s *schema) parseYAML(data []byte, p provenance) (layer, []error) {
	v := viper.New()
	v.SetConfigType("yaml")
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		return nil, []error{fmt.Errorf("cannot parse %s: %w", p.source, err)}
	}
	l := layer{}
	var errs []error
	s.walkTree(v.AllSettings(), "", p, l, &errs)
	// dsh's own files declare no MCP server (a test pins it), so the
	// second parse, which keeps the case of server names, is spared on
	// the embedded defaults every Load reads.
	if !p.builtin {
		errs = append(errs, parseMCPServers(data, p, l)...)
	}
	return l, errs
}

func (s *schema) walkTree(tree map[string]any, prefix string, p provenance, l layer, errs *[]error) {
	keys := make([]string, 0, len(tree))
	for k := range tree {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		key, raw := k, tree[k]
		if prefix != "" {
			key = prefix + "." + k
		}
		if key == mcpServersKey {
			// Read case-preserved by parseMCPServers.
			continue
		}
		if s.sections[key] {
			sub, ok := raw.(map[string]any)
			if !ok {
				*errs = append(*errs, &Error{Key: key, Source: p.source, Problem: "must be a mapping of keys, not a single value"})
				continue
			}
			s.walkTree(sub, key, p, l, errs)
			continue
		}
		if err := s.setLeaf(key, raw, p, l); err != nil {
			*errs = append(*errs, err)
		}
	}
}

// setLeaf checks one key's decoded value against the key tree and sets it
// in l. A key the tree lacks is an error, except in dsh's own files, which
// may carry sections this Load did not register.
func (s *schema) setLeaf(key string, raw any, p provenance, l layer) error {
	lf, ok := s.leaves[key]
	if !ok && p.builtin {
		return nil
	}
	if !ok {
		return &Error{Key: key, Source: p.source, Unknown: true, Hint: s.suggest(key)}
	}
	val, ok := coerce(raw, lf.kind)
	if !ok {
		problem := "must be " + lf.kind.want()
		if lf.kind == kindString {
			problem += " (quote the value)"
		}
		return &Error{Key: key, Source: p.source, Problem: problem}
	}
	if err := s.checkRule(key, val, p.source); err != nil {
		return err
	}
	p.set(l, key, val)
	return nil
}

func (s *schema) checkRule(key string, v any, source string) error {
	if r, ok := s.rules[key]; ok {
		if problem := r(v); problem != "" {
			return &Error{Key: key, Source: source, Problem: problem}
		}
	}
	return nil
}

// coerce converts a decoded YAML value to the canonical Go type of k,
// refusing anything that would lose information.
func coerce(raw any, k kind) (any, bool) {
	switch k {
	case kindString:
		s, ok := raw.(string)
		return s, ok
	case kindBool:
		b, ok := raw.(bool)
		return b, ok
	case kindInt:
		switch n := raw.(type) {
		case int:
			return int64(n), true
		case int64:
			return n, true
		case uint64:
			if n <= math.MaxInt64 {
				return int64(n), true
			}
		case float64:
			// 1e6 is a YAML float; accept it when it is a whole number.
			if n == math.Trunc(n) && n >= math.MinInt64 && n < math.MaxInt64 {
				return int64(n), true
			}
		}
		return nil, false
	case kindFloat:
		switch n := raw.(type) {
		case int:
			return float64(n), true
		case int64:
			return float64(n), true
		case uint64:
			return float64(n), true
		case float64:
			return n, true
		}
	}
	return nil, false
}

// parseText converts an environment or flag value to the type of k.
func parseText(s string, k kind) (any, bool) {
	switch k {
	case kindString:
		return s, true
	case kindBool:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		return b, err == nil
	case kindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		return n, err == nil
	case kindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		return f, err == nil
	}
	return nil, false
}

// textSetting parses one key's text value from the environment or a flag.
func (s *schema) textSetting(key, text string, p provenance, l layer) error {
	lf, ok := s.leaves[key]
	if !ok {
		if s.sections[key] {
			return &Error{Key: key, Source: p.source, Problem: "is a section; set one of its keys instead"}
		}
		return &Error{Key: key, Source: p.source, Unknown: true, Hint: s.suggest(key)}
	}
	val, ok := parseText(text, lf.kind)
	if !ok {
		return &Error{Key: key, Source: p.source, Problem: fmt.Sprintf("must be %s (got %q)", lf.kind.want(), text)}
	}
	if err := s.checkRule(key, val, p.source); err != nil {
		return err
	}
	p.set(l, key, val)
	return nil
}

// envLayer reads DSH_<KEY> for every known key. Iterating the key set (rather
// than splitting variable names) keeps keys with underscores unambiguous.
// An empty variable counts as unset.
func (s *schema) envLayer(lookup func(string) (string, bool), cwd string) (layer, []error) {
	l := layer{}
	var errs []error
	for _, key := range s.keys {
		name := envName(key)
		text, ok := lookup(name)
		if !ok || text == "" {
			continue
		}
		p := provenance{origin: "env " + name, source: "environment variable " + name, baseDir: cwd, rank: rankEnv}
		if err := s.textSetting(key, text, p, l); err != nil {
			errs = append(errs, err)
		}
	}
	return l, errs
}

// flagLayer applies --home and then each --set key=value in order; a later
// flag for the same key wins.
func (s *schema) flagLayer(home string, sets []string, cwd string) (layer, []error) {
	l := layer{}
	var errs []error
	if home != "" {
		p := provenance{origin: "flag --home", source: "flag --home", baseDir: cwd, rank: rankFlag}
		if err := s.textSetting("home", home, p, l); err != nil {
			errs = append(errs, err)
		}
	}
	for _, set := range sets {
		key, text, ok := strings.Cut(set, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			errs = append(errs, fmt.Errorf("flag --set %q must have the form key=value, e.g. --set llm.model=deepseek-v4-pro", set))
			continue
		}
		p := provenance{origin: "flag --set", source: "flag --set " + set, baseDir: cwd, rank: rankFlag}
		if err := s.textSetting(key, text, p, l); err != nil {
			errs = append(errs, err)
		}
	}
	return l, errs
}

// nest turns a layer into the nested map viper merges.
func (l layer) nest() map[string]any {
	root := map[string]any{}
	for key, s := range l {
		if _, ok := s.value.(MCPServer); ok {
			// Servers bypass viper, which would merge two layers' entries
			// of one server field by field and fold their case.
			continue
		}
		setPath(root, key, s.value)
	}
	return root
}

// setPath stores v in a nested map at the dotted key, creating sections.
func setPath(root map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	m := root
	for _, part := range parts[:len(parts)-1] {
		sub, ok := m[part].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[part] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}
