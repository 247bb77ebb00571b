package config

// The tests are the external package config_test, which loads the key tree
// dsh ships through compositions.ConfigSections (whose owners import this
// package). This file lends them the internals they inspect.

// EditDistance is editDistance.
var EditDistance = editDistance

// Tree is a read-only view of a key tree.
type Tree struct{ s *schema }

// TreeOf is the key tree of a Load registering sections.
func TreeOf(sections []Schema) (Tree, error) {
	s, err := withSections(sections)
	return Tree{s}, err
}

// Keys are the tree's leaf keys, sorted.
func (t Tree) Keys() []string { return t.s.keys }

// IsLeaf reports whether key is a leaf key; str whether it holds a string.
func (t Tree) IsLeaf(key string) (leaf, str bool) {
	l, ok := t.s.leaves[key]
	return ok, ok && l.kind == kindString
}

// LeafKind names key's kind ("" for no leaf).
func (t Tree) LeafKind(key string) string {
	l, ok := t.s.leaves[key]
	if !ok {
		return ""
	}
	return l.kind.want()
}

// RuleKeys are the keys that have a rule.
func (t Tree) RuleKeys() []string {
	var out []string
	for k := range t.s.rules {
		out = append(out, k)
	}
	return out
}

// Paths are the path keys; Pairs the key relations.
func (t Tree) Paths() []string { return t.s.paths }
func (t Tree) Pairs() []Pair   { return t.s.pairs }

// Suggest is the tree's typo suggestion.
func (t Tree) Suggest(unknown string) string { return t.s.suggest(unknown) }

// ParseDefaults parses data as the embedded defaults and returns the keys
// it defines.
func (t Tree) ParseDefaults(data []byte) (map[string]bool, []error) {
	l, errs := t.s.parseYAML(data, provenance{source: "default.yaml"})
	out := map[string]bool{}
	for k := range l {
		out[k] = true
	}
	return out, errs
}

// DefaultLayers are the embedded defaults as Load reads them
// (defaultsLayer, from the generated table) and as parseYAML reads data,
// each key with its value, and the problems either found.
func (t Tree) DefaultLayers(data []byte) (built, parsed map[string]any, errs []error) {
	p := provenance{origin: "default", source: "default.yaml", rank: rankDefault, builtin: true}
	values := func(l layer, lerrs []error) map[string]any {
		errs = append(errs, lerrs...)
		out := map[string]any{}
		for k, s := range l {
			out[k] = s.value
		}
		return out
	}
	return values(t.s.defaultsLayer(p)), values(t.s.parseYAML(data, p)), errs
}

// SafeKeys are the keys an untrusted project file may set.
func (t Tree) SafeKeys() []string {
	var out []string
	for k := range t.s.safe {
		out = append(out, k)
	}
	return out
}

// ProjectSafe reports whether an untrusted project file may set key.
func (t Tree) ProjectSafe(key string) bool { return t.s.safe[key] }

// TemplateHeader is templateHeader.
const TemplateHeader = templateHeader

// MaxConfigBytes is maxConfigBytes.
const MaxConfigBytes = maxConfigBytes

// Narrows reports whether key is one an untrusted project may only narrow.
func (t Tree) Narrows(key string) bool { return t.s.stricter[key] != nil }
