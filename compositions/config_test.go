package compositions

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/seed-e9b4dba4/dsh/configs"
	"github.com/seed-e9b4dba4/dsh/host/config"
)

// loadDefaults loads the built-in config with every section dsh registers.
func loadDefaults(t *testing.T) *config.Config {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(config.Options{Home: dir, Cwd: dir, Env: func(string) (string, bool) { return "", false },
		Sections: ConfigSections()})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// yamlKeys flattens a YAML mapping into dotted leaf keys; mcp.servers, a
// map of entries, counts as one key.
func yamlKeys(prefix string, m map[string]any, out *[]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok && key != "mcp.servers" {
			yamlKeys(key, sub, out)
			continue
		}
		*out = append(*out, key)
	}
}

// TestDefaultYAMLDefinesExactlyTheKeyTree checks configs/default.yaml
// against the one key tree: the built-in sections of host/config plus the
// plugins' own Schemas. Every key is defined there (the value is its
// default), none is left over for lack of a declaration.
func TestDefaultYAMLDefinesExactlyTheKeyTree(t *testing.T) {
	var doc map[string]any
	if err := yaml.Unmarshal(configs.Default(), &doc); err != nil {
		t.Fatal(err)
	}
	var inFile []string
	yamlKeys("", doc, &inFile)
	sort.Strings(inFile)
	cfg := loadDefaults(t)
	want := append(cfg.Keys(), "mcp.servers")
	sort.Strings(want)
	if !slices.Equal(inFile, want) {
		t.Errorf("configs/default.yaml keys differ from the key tree:\n file: %v\n tree: %v", inFile, want)
	}
	for _, key := range cfg.Keys() {
		if got := cfg.Origin(key); got != "default" && key != "home" {
			t.Errorf("Origin(%s) = %q, want default", key, got)
		}
	}
}

// TestPluginSectionsDecodeTheirDefaults pins that a plugin applied without
// a config source (DecodeDefaults) gets what a loaded config holds.
func TestPluginSectionsDecodeTheirDefaults(t *testing.T) {
	cfg := loadDefaults(t)
	for _, s := range ConfigSections() {
		fromFile, loaded := reflect.New(s.Type), reflect.New(s.Type)
		if err := s.DecodeDefaults(fromFile.Interface()); err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		if err := cfg.Section(s.Path).Decode(loaded.Interface()); err != nil {
			t.Fatalf("%s: %v", s.Path, err)
		}
		// An empty path key of InHome is filled in by Load alone.
		for name, file := range s.InHome {
			if got, want := cfg.Value(s.Key(name)), filepath.Join(cfg.Home, file); got != want {
				t.Errorf("%s = %v, want %s", s.Key(name), got, want)
			}
			fromFile.Elem().FieldByNameFunc(func(n string) bool {
				f, _ := s.Type.FieldByName(n)
				return f.Tag.Get("mapstructure") == name
			}).SetString(filepath.Join(cfg.Home, file))
		}
		if !reflect.DeepEqual(fromFile.Interface(), loaded.Interface()) {
			t.Errorf("%s: defaults %+v, loaded %+v", s.Path, fromFile.Elem(), loaded.Elem())
		}
	}
}

// TestReadmeConfigurationNamesRealKeys checks the README's configuration
// section against the key tree: every dotted key it names exists (as a key
// or a section), and each row of its variable table pairs a variable with
// the key it sets.
func TestReadmeConfigurationNamesRealKeys(t *testing.T) {
	data, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## Configuration\n")
	if !ok {
		t.Fatal("README.md has no Configuration section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	cfg := loadDefaults(t)
	known := map[string]bool{"mcp.servers": true}
	for _, k := range cfg.Keys() {
		known[k] = true
		for parts := strings.Split(k, "."); len(parts) > 1; parts = parts[:len(parts)-1] {
			known[strings.Join(parts[:len(parts)-1], ".")] = true
		}
	}
	dotted := regexp.MustCompile("`(?:--set )?([a-z_]+(?:\\.[a-z_]+)+)(?:=[^`]*)?`")
	named := 0
	for _, m := range dotted.FindAllStringSubmatch(section, -1) {
		named++
		if !known[m[1]] {
			t.Errorf("README names config key %q, which does not exist", m[1])
		}
	}
	row := regexp.MustCompile("\\| `(DSH_[A-Z_]+)=[^`]*` \\| `([a-z_.]+)` \\|")
	rows := row.FindAllStringSubmatch(section, -1)
	for _, r := range rows {
		if !known[r[2]] || config.EnvName(r[2]) != r[1] {
			t.Errorf("README pairs %s with %q; the key's variable is %s", r[1], r[2], config.EnvName(r[2]))
		}
	}
	if named < 10 || len(rows) < 3 {
		t.Fatalf("found %d key names and %d variable rows; the patterns no longer match the README", named, len(rows))
	}
}
