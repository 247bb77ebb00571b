package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"

	"github.com/seed-e9b4dba4/dsh/host"
)

// meta is what Load learned besides the values.
type meta struct {
	profile  string
	origins  map[string]string
	files    []string
	project  Project
	trust    TrustStore
	userHome string
}

var _ host.ConfigSource = (*Config)(nil)

// schema is the key tree c was loaded with.
func (c *Config) schema() *schema {
	if c.tree == nil {
		return coreSchema()
	}
	return c.tree
}

// Keys returns every config key, sorted: the built-in ones and those of the
// sections registered with Load.
func (c *Config) Keys() []string { return slices.Clone(c.schema().keys) }

// Value returns the effective value of key (a string, int, int64, float64 or
// bool), or nil when key does not exist. Paths are resolved.
func (c *Config) Value(key string) any {
	f, ok := c.schema().field(c, key)
	if !ok {
		return nil
	}
	return f.Interface()
}

// Origin names the layer key's value came from: "default", "profile NAME
// (embedded)", "profile NAME (PATH)", a config file path, "env DSH_X",
// "flag --home" or "flag --set". It is empty for unknown keys and for a
// Config that Load did not make.
func (c *Config) Origin(key string) string {
	if c.meta == nil {
		return ""
	}
	return c.meta.origins[key]
}

// Profile returns the name of the profile Load applied.
func (c *Config) Profile() string {
	if c.meta == nil {
		return ""
	}
	return c.meta.profile
}

// Files returns the config files Load read, lowest precedence first.
func (c *Config) Files() []string {
	if c.meta == nil {
		return nil
	}
	return slices.Clone(c.meta.files)
}

// Project reports what Load did with the project file: whether its folder
// is trusted and which of its keys were ignored.
func (c *Config) Project() Project {
	if c.meta == nil {
		return Project{}
	}
	p := c.meta.project
	p.Ignored = slices.Clone(p.Ignored)
	return p
}

// Trust returns the trust store Load consulted: the one in the dsh home
// that the layers other than the project file select.
func (c *Config) Trust() TrustStore {
	if c.meta == nil {
		return OpenTrust(c.Home)
	}
	return c.meta.trust
}

// UserHome returns the user's home directory as Load found it (from the
// injected environment first), or "" when it is unknown.
func (c *Config) UserHome() string {
	if c.meta == nil {
		return ""
	}
	return c.meta.userHome
}

// Warnings returns the notices a front end should show the user once, for
// example the project keys ignored because the folder is not trusted.
func (c *Config) Warnings() []string {
	var out []string
	if w := c.Project().Warning(); w != "" {
		out = append(out, w)
	}
	tree := c.schema()
	for _, key := range tree.keys {
		hint, secret := tree.secrets[key]
		if secret && c.Value(key) != "" && strings.HasPrefix(c.Origin(key), "flag") {
			out = append(out, key+" was given on the command line, where every process of yours can read it (ps, /proc/PID/cmdline); "+hint)
		}
	}
	return out
}

// IsSecret reports whether key holds a credential that must be masked
// whenever config is shown (Schema.Secrets).
func (c *Config) IsSecret(key string) bool {
	_, ok := c.schema().secrets[key]
	return ok
}

// Explain returns key's value as the package owning it uses it and a note
// on why that differs from the loaded value (Schema.Explain): for a key
// without an Explainer, or one its owner takes as written, Value(key) and
// "".
func (c *Config) Explain(key string) (effective any, note string) {
	tree := c.schema()
	f, ok := tree.explain[key]
	sec, loaded := c.owned[tree.leaves[key].owner]
	if !ok || !loaded {
		return c.Value(key), ""
	}
	effective, note = f(sec.Elem().Interface(), c.Origin(key) == "default")
	if effective == nil {
		effective = c.Value(key)
	}
	return effective, note
}

// EnvName returns the environment variable that sets key, e.g.
// DSH_LLM_BASE_URL for llm.base_url.
func EnvName(key string) string { return envName(key) }

// Section returns the sub-tree at path (e.g. "plugins.spill") for a plugin to
// decode. Decoding is strict: out must be a pointer to a struct whose
// mapstructure tags name every key of the section, and values must fit their
// fields without conversion.
func (c *Config) Section(path string) host.Section { return section{c: c, path: path} }

type section struct {
	c    *Config
	path string
}

func (s section) Decode(out any) error {
	tree, err := s.c.subtree(s.path)
	if err != nil {
		return err
	}
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:      out,
		ErrorUnused: true,
		TagName:     "mapstructure",
	})
	if err != nil {
		return fmt.Errorf("config section %q: %w", s.path, err)
	}
	if err := dec.Decode(tree); err != nil {
		return fmt.Errorf("config section %q: %w", s.path, err)
	}
	return nil
}

// subtree builds the nested map of the keys under path ("" for all).
func (c *Config) subtree(path string) (map[string]any, error) {
	tree := c.schema()
	if _, leaf := tree.leaves[path]; leaf {
		return nil, fmt.Errorf("config key %q is a value, not a section", path)
	}
	if path != "" && !tree.sections[path] {
		return nil, fmt.Errorf("unknown config section %q: load the config with the Schema of the package that owns it (config.Options.Sections)", path)
	}
	prefix := ""
	if path != "" {
		prefix = path + "."
	}
	root := map[string]any{}
	for _, key := range tree.keys {
		rest, ok := strings.CutPrefix(key, prefix)
		if !ok {
			continue
		}
		f, _ := tree.field(c, key)
		setPath(root, rest, f.Interface())
	}
	return root, nil
}
