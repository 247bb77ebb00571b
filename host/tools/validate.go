package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// rootPath names the whole argument object in violation messages.
const rootPath = "arguments"

// Validate checks args against the schema and returns one message per
// violation, in a stable order: properties in declaration order (depth
// first), then undeclared keys of closed nested objects in key order. An
// empty result means the arguments are valid.
//
// Rules: the root must be a JSON object; undeclared keys are allowed on the
// root (it declares no additionalProperties) but rejected on nested objects;
// "integer" means a JSON number with no fractional part, whatever its size,
// so range checks stay with the tool; a null optional property counts as
// absent, because models often spell "omitted" that way.
func (o *ObjectSchema) Validate(args json.RawMessage) []string {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	v, err := decodeJSON(args)
	if err != nil {
		return []string{fmt.Sprintf("%s: not valid JSON (%v)", rootPath, err)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: expected object, got %s", rootPath, describe(v))}
	}
	var props []Property
	if o != nil {
		props = o.Properties
	}
	var out []string
	validateObject(props, true, obj, "", &out)
	return out
}

// validate checks call arguments against d's parameter schema.
func (d *Definition) validate(args json.RawMessage) []string {
	if d.ValidateArgs != nil {
		return d.ValidateArgs(args)
	}
	return d.Parameters.Validate(args)
}

// decodeJSON parses exactly one JSON value, keeping numbers as their text.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func validateValue(s *TypeSchema, v any, path string, out *[]string) {
	mismatch := func() {
		*out = append(*out, fmt.Sprintf("%s: expected %s, got %s", path, s.Type, describe(v)))
	}
	switch s.Type {
	case TypeString:
		str, ok := v.(string)
		if !ok {
			mismatch()
			return
		}
		if len(s.Enum) > 0 && !contains(s.Enum, str) {
			*out = append(*out, fmt.Sprintf("%s: must be one of %s", path, quoteList(s.Enum)))
		}
	case TypeInteger:
		n, ok := v.(json.Number)
		if !ok || !isInteger(n) {
			mismatch()
		}
	case TypeNumber:
		n, ok := v.(json.Number)
		if !ok || !isFinite(n) {
			mismatch()
		}
	case TypeBoolean:
		if _, ok := v.(bool); !ok {
			mismatch()
		}
	case TypeNull:
		if v != nil {
			mismatch()
		}
	case TypeArray:
		items, ok := v.([]any)
		if !ok {
			mismatch()
			return
		}
		if s.Items == nil {
			return
		}
		for i, item := range items {
			validateValue(s.Items, item, fmt.Sprintf("%s[%d]", path, i), out)
		}
	case TypeObject:
		obj, ok := v.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		validateObject(s.Properties, s.open, obj, path, out)
	}
}

func validateObject(props []Property, open bool, obj map[string]any, path string, out *[]string) {
	for _, p := range props {
		child := join(path, p.Name)
		v, present := obj[p.Name]
		switch {
		case !present && p.Required:
			*out = append(*out, child+": required")
		case !present, v == nil && !p.Required:
		default:
			validateValue(p.Schema, v, child, out)
		}
	}
	if open {
		return
	}
	var unknown []string
	for k := range obj {
		if !declared(props, k) {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		*out = append(*out, fmt.Sprintf("%s: unknown property (allowed: %s)", join(path, k), allowedNames(props)))
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func declared(props []Property, name string) bool {
	for _, p := range props {
		if p.Name == name {
			return true
		}
	}
	return false
}

func allowedNames(props []Property) string {
	if len(props) == 0 {
		return "none"
	}
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func quoteList(list []string) string {
	q := make([]string, len(list))
	for i, v := range list {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// isInteger reports whether n is mathematically integral. Magnitude is not
// checked: 2^53 and beyond pass, and the tool decides what range it accepts.
func isInteger(n json.Number) bool {
	if _, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return true
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) {
		// Integral text too long for int64 fails ParseInt with a range
		// error but is still an integer.
		return err != nil && !strings.ContainsAny(string(n), ".eE") && isDigits(string(n))
	}
	return f == math.Trunc(f)
}

func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

func isFinite(n json.Number) bool {
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && !math.IsInf(f, 0) && !math.IsNaN(f)
}

// describe names a JSON value's type for a violation message, with the value
// itself for scalars (long strings are shortened).
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case json.Number:
		return "number " + string(x)
	case string:
		const max = 40
		if utf8.RuneCountInString(x) > max {
			x = string([]rune(x)[:max]) + "…"
		}
		return "string " + strconv.Quote(x)
	case []any:
		return "array"
	case map[string]any:
		return "object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
