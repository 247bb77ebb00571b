package tools

import (
	"bytes"
	"encoding/json"

	"github.com/seed-e9b4dba4/dsh/host/session"
)

// JSON schema types supported by the builder.
const (
	TypeString  = "string"
	TypeInteger = "integer"
	TypeNumber  = "number"
	TypeBoolean = "boolean"
	TypeArray   = "array"
	TypeObject  = "object"
	// TypeNull is accepted only in output schemas.
	TypeNull = "null"
)

// TypeSchema is a property (or array item) schema. Build it with String,
// Integer, Number, Boolean, ArrayOf or NestedObject.
type TypeSchema struct {
	Type        string
	Description string
	Enum        []string
	Items       *TypeSchema
	Properties  []Property

	// open marks an object that accepts undeclared keys. Builder schemas are
	// always closed; only output schemas parsed without
	// "additionalProperties": false are open.
	open bool
}

// Property is one named property of an object schema.
type Property struct {
	Name     string
	Schema   *TypeSchema
	Required bool
}

// ObjectSchema is a tool's parameter schema: an object whose properties keep
// declaration order.
type ObjectSchema struct {
	Properties []Property
}

// String returns a string schema.
func String(desc string) *TypeSchema { return &TypeSchema{Type: TypeString, Description: desc} }

// Integer returns an integer schema.
func Integer(desc string) *TypeSchema { return &TypeSchema{Type: TypeInteger, Description: desc} }

// Number returns a number schema.
func Number(desc string) *TypeSchema { return &TypeSchema{Type: TypeNumber, Description: desc} }

// Boolean returns a boolean schema.
func Boolean(desc string) *TypeSchema { return &TypeSchema{Type: TypeBoolean, Description: desc} }

// ArrayOf returns an array schema with the given item schema.
func ArrayOf(desc string, items *TypeSchema) *TypeSchema {
	return &TypeSchema{Type: TypeArray, Description: desc, Items: items}
}

// NestedObject returns an object schema for a property or array item; it is
// rendered with an explicit "additionalProperties": false.
func NestedObject(desc string, props ...Property) *TypeSchema {
	return &TypeSchema{Type: TypeObject, Description: desc, Properties: props}
}

// OneOf restricts a string schema to the given values and returns it.
func (s *TypeSchema) OneOf(values ...string) *TypeSchema {
	s.Enum = values
	return s
}

// Field is an optional property.
func Field(name string, s *TypeSchema) Property { return Property{Name: name, Schema: s} }

// Req is a required property.
func Req(name string, s *TypeSchema) Property { return Property{Name: name, Schema: s, Required: true} }

// Object returns a root parameter schema.
func Object(props ...Property) *ObjectSchema { return &ObjectSchema{Properties: props} }

// MarshalJSON renders the canonical root form
// {"type":"object","properties":{...},"required":[...]} with "required"
// omitted when empty and no "additionalProperties".
func (o *ObjectSchema) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"type":"object","properties":`)
	writeProperties(&buf, o.Properties)
	writeRequired(&buf, o.Properties)
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// MarshalJSON renders a property schema with key order type, description,
// then enum, items, or additionalProperties/properties/required.
func (s *TypeSchema) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	writeType(&buf, s)
	return buf.Bytes(), nil
}

func writeType(buf *bytes.Buffer, s *TypeSchema) {
	buf.WriteString(`{"type":`)
	writeString(buf, s.Type)
	if s.Description != "" {
		buf.WriteString(`,"description":`)
		writeString(buf, s.Description)
	}
	switch {
	case len(s.Enum) > 0:
		buf.WriteString(`,"enum":[`)
		for i, v := range s.Enum {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, v)
		}
		buf.WriteByte(']')
	case s.Type == TypeArray && s.Items != nil:
		buf.WriteString(`,"items":`)
		writeType(buf, s.Items)
	case s.Type == TypeObject:
		buf.WriteString(`,"additionalProperties":false,"properties":`)
		writeProperties(buf, s.Properties)
		writeRequired(buf, s.Properties)
	}
	buf.WriteByte('}')
}

func writeProperties(buf *bytes.Buffer, props []Property) {
	buf.WriteByte('{')
	for i, p := range props {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeString(buf, p.Name)
		buf.WriteByte(':')
		writeType(buf, p.Schema)
	}
	buf.WriteByte('}')
}

func writeRequired(buf *bytes.Buffer, props []Property) {
	first := true
	for _, p := range props {
		if !p.Required {
			continue
		}
		if first {
			buf.WriteString(`,"required":[`)
			first = false
		} else {
			buf.WriteByte(',')
		}
		writeString(buf, p.Name)
	}
	if !first {
		buf.WriteByte(']')
	}
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := session.Marshal(s)
	buf.Write(b)
}

// Canonical returns the canonical JSON of the schema.
func (o *ObjectSchema) Canonical() json.RawMessage {
	b, _ := o.MarshalJSON()
	return b
}

// SchemaOf returns what a request carries for d.
func SchemaOf(d *Definition) Schema {
	params := json.RawMessage(`{"type":"object","properties":{}}`)
	switch {
	case len(d.RawParameters) > 0:
		params = d.RawParameters
	case d.Parameters != nil:
		params = d.Parameters.Canonical()
	}
	return Schema{Name: d.Name, Description: d.Description, Parameters: params}
}
