package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// KeyDoc is what a user is told about one key of the key tree: its
// default and doc from configs/default.yaml and its rules from the Schema
// that declares it.
type KeyDoc struct {
	// Key is the dotted key.
	Key string
	// Section is the key's section in configs/default.yaml (its first
	// path element) and SectionDoc that section's comment, if it has one.
	Section, SectionDoc string
	// Default is the built-in value as configs/default.yaml writes it (a
	// string, int, float64 or bool; a map for mcp.servers).
	Default any
	// Doc is the key's comment in configs/default.yaml, on one line.
	Doc string
	// Env is the variable that sets the key; "" when none does (mcp.servers).
	Env string
	// Safe reports that an untrusted project file may set the key, and
	// Stricter that it may set it only to a stricter value; an untrusted
	// project's other keys are ignored.
	Safe, Stricter bool
	// Secret reports a credential, which config show masks.
	Secret bool
	// InHome names the file in dsh's home an empty value means.
	InHome string
}

// Reference documents every key of the key tree with sections registered,
// in the order of configs/default.yaml. It fails when a key lacks its
// default or its doc there.
func Reference(sections []Schema) ([]KeyDoc, error) {
	tree, err := withSections(sections)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(configs.Default(), &doc); err != nil || len(doc.Content) != 1 {
		return nil, fmt.Errorf("cannot parse %s: %v", configs.DefaultPath, err)
	}
	r := referencer{tree: tree, found: map[string]bool{}}
	if err := r.mapping(doc.Content[0], "", nil); err != nil {
		return nil, err
	}
	for _, key := range append(tree.keys, mcpServersKey) {
		if !r.found[key] {
			return nil, fmt.Errorf("%s has no default for config key %q", configs.DefaultPath, key)
		}
	}
	return r.out, nil
}

type referencer struct {
	tree  *schema
	found map[string]bool
	out   []KeyDoc
}

// mapping documents the keys of one mapping of configs/default.yaml;
// section is the KeyDoc of its top-level section, nil at the top.
func (r *referencer) mapping(n *yaml.Node, prefix string, section *KeyDoc) error {
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key, top := k.Value, section
		if prefix != "" {
			key = prefix + "." + key
		} else {
			top = &KeyDoc{Section: key, SectionDoc: comment(k.HeadComment)}
		}
		_, leaf := r.tree.leaves[key]
		if v.Kind == yaml.MappingNode && !leaf && key != mcpServersKey {
			if prefix != "" && k.HeadComment != "" {
				return fmt.Errorf("%s comments the section %q, which the configuration reference cannot show: move the comment to its top-level section or its keys", configs.DefaultPath, key)
			}
			if err := r.mapping(v, key, top); err != nil {
				return err
			}
			continue
		}
		if !leaf && key != mcpServersKey {
			continue // a section this tree does not register
		}
		d := *top
		if prefix == "" {
			d.SectionDoc = "" // a top-level key documents itself
		}
		d.Key, d.Doc = key, comment(k.HeadComment)
		if d.Doc == "" {
			return fmt.Errorf("%s has no comment documenting config key %q", configs.DefaultPath, key)
		}
		if err := v.Decode(&d.Default); err != nil {
			return fmt.Errorf("%s: config key %q: %w", configs.DefaultPath, key, err)
		}
		if leaf {
			d.Env = envName(key)
		}
		_, d.Secret = r.tree.secrets[key]
		d.Safe, d.Stricter, d.InHome = r.tree.safe[key], r.tree.stricter[key] != nil, r.tree.inHome[key]
		r.found[key] = true
		r.out = append(r.out, d)
	}
	return nil
}

// comment joins a YAML comment's lines into one line of text.
func comment(c string) string {
	var words []string
	for _, line := range strings.Split(c, "\n") {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "#"))
		if line != "" {
			words = append(words, line)
		}
	}
	return strings.Join(words, " ")
}
