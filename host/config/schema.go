package config

import (
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
)

// kind is the type of a leaf key's value.
type kind int

const (
	kindString kind = iota
	kindInt
	kindFloat
	kindBool
)

// want is the phrase that completes "config key K in S must be ...".
func (k kind) want() string {
	switch k {
	case kindInt:
		return "an integer"
	case kindFloat:
		return "a number"
	case kindBool:
		return "true or false"
	default:
		return "a string"
	}
}

// schema is the key tree: the built-in sections, derived from the Config
// struct tags, plus the sections a Load registers (Options.Sections). It is
// immutable after construction.
type schema struct {
	leaves   map[string]leaf
	sections map[string]bool
	keys     []string // sorted leaf keys
	rules    map[string]Rule
	paths    []string // keys holding file system paths
	pairs    []Pair   // relations between keys, by full key
	// literals are path values kept as written, by key; inHome names the
	// file in the home an empty path key means.
	literals map[string][]string
	inHome   map[string]string
	// secrets maps the credential keys to where to keep them instead.
	secrets map[string]string
	// safe holds the keys an untrusted project may set.
	safe map[string]bool
	// stricter holds the keys an untrusted project may only narrow.
	stricter map[string]func(below, project any) bool
	// explain holds the owners' Explainers, by full key.
	explain map[string]Explainer
	// owned maps each registered section's path to its struct type.
	owned map[string]reflect.Type
}

type leaf struct {
	kind  kind
	owner string // the registered section holding the key; "" for Config
	index []int  // field path from Config or from the owner's struct
}

// coreSchema is the key tree of the built-in sections alone, built on
// first use (a Load with registered sections builds its own) and never
// changed after.
var coreSchema = sync.OnceValue(func() *schema { return buildSchema(reflect.TypeFor[Config]()) })

func buildSchema(t reflect.Type) *schema {
	s := &schema{leaves: map[string]leaf{}, sections: map[string]bool{}, rules: map[string]Rule{}, safe: map[string]bool{}, secrets: map[string]string{}, literals: map[string][]string{}, inHome: map[string]string{}, stricter: map[string]func(below, project any) bool{}, explain: map[string]Explainer{}}
	s.walk(t, "", nil, "")
	s.paths = slices.Clone(pathKeys)
	s.sortKeys()
	return s
}

func (s *schema) sortKeys() {
	s.keys = s.keys[:0]
	for k := range s.leaves {
		s.keys = append(s.keys, k)
	}
	sort.Strings(s.keys)
}

func (s *schema) walk(t reflect.Type, prefix string, index []int, owner string) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("mapstructure")
		if tag == "" {
			continue
		}
		key := tag
		if prefix != "" {
			key = prefix + "." + tag
		}
		idx := append(append([]int(nil), index...), i)
		switch f.Type.Kind() {
		case reflect.Struct:
			s.sections[key] = true
			s.walk(f.Type, key, idx, owner)
		case reflect.String:
			s.leaves[key] = leaf{kindString, owner, idx}
		case reflect.Int, reflect.Int64:
			s.leaves[key] = leaf{kindInt, owner, idx}
		case reflect.Float64:
			s.leaves[key] = leaf{kindFloat, owner, idx}
		case reflect.Bool:
			s.leaves[key] = leaf{kindBool, owner, idx}
		default:
			panic(fmt.Sprintf("config: key %q has unsupported type %s", key, f.Type))
		}
	}
}

// envName is the environment variable that sets key: DSH_ followed by the
// key path upper-cased with dots as underscores.
func envName(key string) string {
	return "DSH_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// field returns the addressable struct field holding key.
func (s *schema) field(c *Config, key string) (reflect.Value, bool) {
	l, ok := s.leaves[key]
	if !ok {
		return reflect.Value{}, false
	}
	if l.owner == "" {
		return reflect.ValueOf(c).Elem().FieldByIndex(l.index), true
	}
	sec, ok := c.owned[l.owner]
	if !ok {
		return reflect.Value{}, false
	}
	return sec.Elem().FieldByIndex(l.index), true
}

// suggest returns the known key or section closest to an unknown key, or ""
// when nothing is close enough to be a plausible typo.
func (s *schema) suggest(unknown string) string {
	folded := strings.ToLower(unknown)
	best, bestDist := "", len(unknown)/3+1
	consider := func(k string) {
		if k == unknown {
			return
		}
		if d := editDistance(folded, k); d < bestDist || (d == bestDist && best != "" && k < best) {
			best, bestDist = k, d
		}
	}
	for k := range s.leaves {
		consider(k)
	}
	for k := range s.sections {
		consider(k)
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, counting an
// adjacent transposition as one edit (typing "modle" for "model").
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
