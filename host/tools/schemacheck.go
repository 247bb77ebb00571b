package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// check reports the first structural mistake in a parameter schema, so a
// broken definition fails at registration instead of producing a schema the
// model cannot satisfy (or a nil dereference while rendering it).
func (o *ObjectSchema) check() error {
	if o == nil {
		return nil
	}
	return checkProperties(o.Properties, "")
}

func checkProperties(props []Property, path string) error {
	seen := map[string]bool{}
	for _, p := range props {
		if p.Name == "" {
			return fmt.Errorf("%s: property with an empty name", orRoot(path))
		}
		child := join(path, p.Name)
		if seen[p.Name] {
			return fmt.Errorf("%s: declared twice", child)
		}
		seen[p.Name] = true
		if err := checkType(p.Schema, child); err != nil {
			return err
		}
	}
	return nil
}

func checkType(s *TypeSchema, path string) error {
	if s == nil {
		return fmt.Errorf("%s: missing schema", path)
	}
	switch s.Type {
	case TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeArray, TypeObject:
	default:
		return fmt.Errorf("%s: unsupported type %q", path, s.Type)
	}
	if len(s.Enum) > 0 && s.Type != TypeString {
		return fmt.Errorf("%s: enum is supported on strings only", path)
	}
	if s.Items != nil && s.Type != TypeArray {
		return fmt.Errorf("%s: items on a %s", path, s.Type)
	}
	if len(s.Properties) > 0 && s.Type != TypeObject {
		return fmt.Errorf("%s: properties on a %s", path, s.Type)
	}
	if s.Items != nil {
		if err := checkType(s.Items, path+"[]"); err != nil {
			return err
		}
	}
	return checkProperties(s.Properties, path)
}

func orRoot(path string) string {
	if path == "" {
		return "parameters"
	}
	return path
}

// rawSchema is the wire form of the schema subset output schemas may use.
type rawSchema struct {
	Type                 string                     `json:"type"`
	Description          string                     `json:"description"`
	Title                string                     `json:"title"`
	Enum                 []string                   `json:"enum"`
	Items                json.RawMessage            `json:"items"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

// parseOutputSchema compiles a tool's output schema into the validator's
// form. Nil means "no schema": any value is accepted. Unsupported keywords
// are rejected rather than silently unenforced.
func parseOutputSchema(raw json.RawMessage) (*TypeSchema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	return parseSchemaNode(raw, "schema")
}

func parseSchemaNode(raw json.RawMessage, path string) (*TypeSchema, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var r rawSchema
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	s := &TypeSchema{Type: r.Type, Description: r.Description, Enum: r.Enum}
	switch r.Type {
	case TypeString, TypeInteger, TypeNumber, TypeBoolean, TypeNull, TypeArray, TypeObject:
	case "":
		return nil, fmt.Errorf("%s: type is required", path)
	default:
		return nil, fmt.Errorf("%s: unsupported type %q", path, r.Type)
	}
	if len(r.Enum) > 0 && r.Type != TypeString {
		return nil, fmt.Errorf("%s: enum is supported on strings only", path)
	}
	if r.Items != nil {
		if r.Type != TypeArray {
			return nil, fmt.Errorf("%s: items on a %s", path, r.Type)
		}
		items, err := parseSchemaNode(r.Items, path+".items")
		if err != nil {
			return nil, err
		}
		s.Items = items
	}
	if r.Type != TypeObject {
		if r.Properties != nil || r.Required != nil || r.AdditionalProperties != nil {
			return nil, fmt.Errorf("%s: object keywords on a %s", path, r.Type)
		}
		return s, nil
	}
	s.open = r.AdditionalProperties == nil || *r.AdditionalProperties
	names, err := propertyOrder(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	required := map[string]bool{}
	for _, name := range r.Required {
		if _, ok := r.Properties[name]; !ok {
			return nil, fmt.Errorf("%s: required names %q, which is not in properties", path, name)
		}
		required[name] = true
	}
	for _, name := range names {
		child, err := parseSchemaNode(r.Properties[name], path+".properties."+name)
		if err != nil {
			return nil, err
		}
		s.Properties = append(s.Properties, Property{Name: name, Schema: child, Required: required[name]})
	}
	return s, nil
}

// propertyOrder returns the keys of the schema's "properties" object in
// document order, so violations follow the author's declaration order.
func propertyOrder(raw json.RawMessage) ([]string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	props, ok := top["properties"]
	if !ok {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(props))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		names = append(names, name)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// validateOutput checks a tool's canonical value against its compiled output
// schema. Strings take a fast path; anything else is checked in its JSON form,
// which is what reaches logs and renderers.
func validateOutput(s *TypeSchema, value any) []string {
	if s == nil {
		return nil
	}
	if _, ok := value.(string); ok && s.Type == TypeString && len(s.Enum) == 0 {
		return nil
	}
	var data []byte
	if raw, ok := value.(json.RawMessage); ok {
		data = raw
	} else {
		b, err := session.Marshal(value)
		if err != nil {
			return []string{fmt.Sprintf("value: not encodable as JSON (%v)", err)}
		}
		data = b
	}
	v, err := decodeJSON(data)
	if err != nil {
		return []string{fmt.Sprintf("value: not valid JSON (%v)", err)}
	}
	var out []string
	validateValue(s, v, "value", &out)
	return out
}

// violationList joins violations for an error message.
func violationList(v []string) string { return strings.Join(v, "; ") }
