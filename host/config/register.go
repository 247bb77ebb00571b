package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-viper/mapstructure/v2"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// Schema declares one config section on behalf of the package that reads
// it (a plugin, usually): the struct its keys decode into and the rules its
// values must meet. The struct's mapstructure tags name the keys and its
// field types are the key types (string, int, int64, float64, bool or a
// nested struct for a sub-section); a Rule per key checks the value in every
// layer, so the owner never validates again. The section's defaults and
// one-line docs are its entries in configs/default.yaml, which tests check
// against every registered Schema.
//
// A Schema is a value: declare it once as a package variable next to the
// struct and pass it to Load through Options.Sections.
type Schema struct {
	// Path is the section's dotted path, e.g. "plugins.spill".
	Path string
	// Type is the section's struct type.
	Type reflect.Type
	// Rules check single keys, by key relative to Path. Keys without a
	// rule accept any value of their type.
	Rules map[string]Rule
	// Paths lists the keys (relative to Path) that hold file system paths;
	// Load resolves them like the built-in path keys.
	Paths []string
	// Literals lists, per path key, the values that name something other
	// than a file (":memory:") and are kept as written.
	Literals map[string][]string
	// InHome maps path keys whose empty value means a file in dsh's home to
	// that file's name; Load fills the path in.
	InHome map[string]string
	// Pairs relate two keys of the section that no single-key rule can
	// check; Load checks them on the merged result.
	Pairs []Pair
	// Safe lists the keys (relative to Path) an untrusted project file may
	// set: keys that cannot run code, widen permissions, redirect traffic or
	// credentials, choose what leaves the machine or move dsh's files. It is
	// an allowlist on purpose: a key added to the section later is refused
	// from untrusted folders until its owner decides it is harmless.
	Safe []string
	// Secrets maps the keys (relative to Path) that hold credentials to
	// where the user should keep the credential instead: config show masks
	// their values, and a flag setting one draws a warning that ends with
	// the hint (a command line is visible to every process of the user).
	Secrets map[string]string
	// Stricter lists the keys (relative to Path) an untrusted project file
	// may set only to make dsh stricter: the function reports whether the
	// project's value is at least as strict as the one below it. Every other
	// key outside Safe is ignored from such a file.
	Stricter map[string]func(below, project any) bool
	// Explain lists the keys (relative to Path) whose loaded value the
	// owner does not use as written, with what it makes of them, so that
	// config show prints what is in effect (Config.Explain).
	Explain map[string]Explainer
}

// Explainer tells what the owner of a section makes of one of its keys:
// given the loaded section (a value of the Schema's Type) and whether the
// key has its built-in default, it returns the value in effect (nil: the
// loaded one) and a note on why, which config show adds to the key's
// origin ("": nothing to add).
type Explainer func(section any, isDefault bool) (effective any, note string)

// Pair is a relation between two keys of a section (names relative to its
// Path): Low must be at most High, or below it when Strict is set. Both keys
// are integers or both are numbers.
type Pair struct {
	Low, High string
	Strict    bool
}

// SchemaOf declares the section at path decoded into T.
func SchemaOf[T any](path string, rules map[string]Rule, paths ...string) Schema {
	return Schema{Path: path, Type: reflect.TypeFor[T](), Rules: rules, Paths: paths}
}

// Key returns the full key of the section's key name ("max_inline_bytes"
// becomes "plugins.spill.max_inline_bytes").
func (s Schema) Key(name string) string { return s.Path + "." + name }

// DecodeDefaults fills out (a pointer to s's struct) with the section's
// built-in defaults from configs/default.yaml, for a caller that has no
// loaded Config (a plugin applied without a config source). It reads the
// file as decoded when dsh was built (builtinDefaults): plugins call it
// as they start, and parsing the file there took about a millisecond
// each, several times in every editor session's start.
func (s Schema) DecodeDefaults(out any) error {
	prefix := s.Path + "."
	section := map[string]any{}
	for _, d := range builtinDefaults {
		if rest, ok := strings.CutPrefix(d.key, prefix); ok {
			setPath(section, rest, d.value)
		}
	}
	if len(section) == 0 {
		return fmt.Errorf("%s has no section %q", configs.DefaultPath, s.Path)
	}
	if err := decodeStrict(section, out); err != nil {
		return fmt.Errorf("defaults of config section %q: %w", s.Path, err)
	}
	return nil
}

// decodeStrict decodes a nested map into out: every key must be a field,
// every field must be set and no value is converted between kinds.
func decodeStrict(in, out any) error {
	dec, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		Result:               out,
		ErrorUnused:          true,
		ErrorUnset:           true,
		IgnoreUntaggedFields: true,
		TagName:              "mapstructure",
	})
	if err != nil {
		return err
	}
	return dec.Decode(in)
}

// withSections returns the key tree of the built-in Config plus the
// registered sections. A section may not overlap a built-in key or another
// section.
func withSections(sections []Schema) (*schema, error) {
	if len(sections) == 0 {
		return coreSchema(), nil
	}
	s := buildSchema(reflect.TypeFor[Config]())
	s.owned = map[string]reflect.Type{}
	for _, sec := range sections {
		if sec.Path == "" || sec.Type == nil || sec.Type.Kind() != reflect.Struct {
			return nil, fmt.Errorf("config section %q: a registered section needs a path and a struct type", sec.Path)
		}
		if s.sections[sec.Path] || s.leaves[sec.Path].index != nil || overlaps(s, sec.Path) {
			return nil, fmt.Errorf("config section %q is declared twice or overlaps a built-in key", sec.Path)
		}
		parts := strings.Split(sec.Path, ".")
		for i := 1; i < len(parts); i++ {
			parent := strings.Join(parts[:i], ".")
			if _, leaf := s.leaves[parent]; leaf {
				return nil, fmt.Errorf("config section %q lies under the key %q", sec.Path, parent)
			}
			s.sections[parent] = true
		}
		s.sections[sec.Path] = true
		s.owned[sec.Path] = sec.Type
		s.walk(sec.Type, sec.Path, nil, sec.Path)
		for name, r := range sec.Rules {
			key := sec.Key(name)
			if _, ok := s.leaves[key]; !ok {
				return nil, fmt.Errorf("config section %q has a rule for %q, which is not one of its keys", sec.Path, name)
			}
			s.rules[key] = r
		}
		for _, name := range sec.Paths {
			key := sec.Key(name)
			if l, ok := s.leaves[key]; !ok || l.kind != kindString {
				return nil, fmt.Errorf("config section %q names %q as a path, which is not one of its string keys", sec.Path, name)
			}
			s.paths = append(s.paths, key)
		}
		for name, values := range sec.Literals {
			if !slices.Contains(sec.Paths, name) {
				return nil, fmt.Errorf("config section %q keeps literal values of %q, which is not one of its path keys", sec.Path, name)
			}
			s.literals[sec.Key(name)] = values
		}
		for name, file := range sec.InHome {
			if !slices.Contains(sec.Paths, name) || file == "" {
				return nil, fmt.Errorf("config section %q places %q in the home, which is not one of its path keys", sec.Path, name)
			}
			s.inHome[sec.Key(name)] = file
		}
		for _, p := range sec.Pairs {
			lo, hi := s.leaves[sec.Key(p.Low)], s.leaves[sec.Key(p.High)]
			if lo.index == nil || hi.index == nil || lo.kind != hi.kind || (lo.kind != kindInt && lo.kind != kindFloat) {
				return nil, fmt.Errorf("config section %q relates %q and %q, which are not two of its keys of one numeric type", sec.Path, p.Low, p.High)
			}
			s.pairs = append(s.pairs, Pair{Low: sec.Key(p.Low), High: sec.Key(p.High), Strict: p.Strict})
		}
		for _, name := range sec.Safe {
			key := sec.Key(name)
			if _, ok := s.leaves[key]; !ok {
				return nil, fmt.Errorf("config section %q lets a project set %q, which is not one of its keys", sec.Path, name)
			}
			s.safe[key] = true
		}
		for name, hint := range sec.Secrets {
			key := sec.Key(name)
			if l, ok := s.leaves[key]; !ok || l.kind != kindString {
				return nil, fmt.Errorf("config section %q names %q as a secret, which is not one of its string keys", sec.Path, name)
			}
			s.secrets[key] = hint
		}
		for name, f := range sec.Stricter {
			key := sec.Key(name)
			if _, ok := s.leaves[key]; !ok || f == nil {
				return nil, fmt.Errorf("config section %q narrows %q, which is not one of its keys", sec.Path, name)
			}
			s.stricter[key] = f
		}
		for name, f := range sec.Explain {
			key := sec.Key(name)
			if _, ok := s.leaves[key]; !ok || f == nil {
				return nil, fmt.Errorf("config section %q explains %q, which is not one of its keys", sec.Path, name)
			}
			s.explain[key] = f
		}
	}
	s.sortKeys()
	return s, nil
}

// overlaps reports whether a key of s already lies under path.
func overlaps(s *schema, path string) bool {
	for k := range s.leaves {
		if strings.HasPrefix(k, path+".") {
			return true
		}
	}
	return false
}

// Get returns the section s of c, as loaded. T is s's struct type, and c
// must have been loaded with s registered (Options.Sections).
func Get[T any](c *Config, s Schema) (T, error) {
	var out T
	if s.Type != reflect.TypeFor[T]() {
		return out, fmt.Errorf("config section %q decodes into %s, not %T", s.Path, s.Type, out)
	}
	v, ok := c.owned[s.Path]
	if !ok || v.Type().Elem() != s.Type {
		return out, fmt.Errorf("unknown config section %q: load the config with the Schema of the package that owns it (config.Options.Sections)", s.Path)
	}
	return v.Elem().Interface().(T), nil
}

// Check applies the section's rules and pairs to v, a value of its struct
// type that did not come through Load (a caller that builds its settings in
// code), and returns the problems Load would report, without a source.
func (s Schema) Check(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Type() != s.Type {
		return fmt.Errorf("config section %q holds a %s, not a %s", s.Path, s.Type, rv.Type())
	}
	tree, err := withSections([]Schema{s})
	if err != nil {
		return err
	}
	value := func(key string) any {
		f := rv.FieldByIndex(tree.leaves[key].index)
		if f.CanInt() {
			return f.Int()
		}
		return f.Interface()
	}
	var errs []error
	for _, key := range tree.keys {
		if r, ok := tree.rules[key]; ok && tree.leaves[key].owner == s.Path {
			if problem := r(value(key)); problem != "" {
				errs = append(errs, &Error{Key: key, Problem: problem})
			}
		}
	}
	for _, p := range tree.pairs {
		if !strings.HasPrefix(p.Low, s.Path+".") {
			continue
		}
		if lo, hi := value(p.Low), value(p.High); !p.holds(lo, hi) {
			rel := "at most"
			if p.Strict {
				rel = "less than"
			}
			errs = append(errs, &Error{Key: p.Low, Problem: fmt.Sprintf("must be %s %s (%v)", rel, p.High, hi)})
		}
	}
	return errors.Join(errs...)
}
