package sessionquery

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	sq "github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// Tool names, in registration order.
const (
	ToolSessionSearch = "session_search"
	ToolEventSearch   = "session_event_search"
	ToolSessionTrace  = "session_trace"
	ToolEventTrace    = "session_event_trace"
	ToolEventRead     = "session_event_read"
)

// maxSafeInteger is JavaScript's Number.MAX_SAFE_INTEGER: the bound of every
// integer argument, so that the model-facing contract does not depend on
// which runtime serves it.
const maxSafeInteger = 1<<53 - 1

// Shared property descriptions (session-query.md §4.1).
const (
	descTargetSession = "Target session id. Omit for the current session."
	descTargetSeq     = "Target event sequence number."
	descSeqFrom       = "Inclusive event sequence lower bound."
	descSeqTo         = "Inclusive event sequence upper bound."
	descTimeFrom      = "Inclusive timezone-qualified ISO 8601 event-time lower bound."
	descTimeTo        = "Inclusive timezone-qualified ISO 8601 event-time upper bound."
	descEventTypes    = "Event types to include."
	descSurfaces      = "Event surfaces to include."
)

func stringList(desc string) *tools.TypeSchema { return tools.ArrayOf(desc, tools.String("")) }

func surfaceList() *tools.TypeSchema {
	return tools.ArrayOf(descSurfaces, tools.String("").OneOf(sq.SurfaceCurrent, sq.SurfaceShadowed, sq.SurfaceLogOnly))
}

func sessionSearchParams() *tools.ObjectSchema {
	return tools.Object(
		tools.Req("query", tools.String("Literal full-text query over prior session history.")),
		tools.Field("session_ids", stringList("Optional session ids to include.")),
		tools.Field("created_at_from", tools.String("Inclusive timezone-qualified ISO 8601 creation-time lower bound.")),
		tools.Field("created_at_to", tools.String("Inclusive timezone-qualified ISO 8601 creation-time upper bound.")),
		tools.Field("parent_session_ids", stringList("Optional direct parent session ids.")),
		tools.Field("include_root_sessions", tools.Boolean("Include sessions with no parent in the parent filter.")),
		tools.Field("availability", tools.ArrayOf("Require at least one selected source availability.",
			tools.String("").OneOf(sq.AvailabilityLive, sq.AvailabilityPersisted))),
		tools.Field("event_seq_from", tools.Integer(descSeqFrom)),
		tools.Field("event_seq_to", tools.Integer(descSeqTo)),
		tools.Field("event_time_from", tools.String(descTimeFrom)),
		tools.Field("event_time_to", tools.String(descTimeTo)),
		tools.Field("event_types", stringList(descEventTypes)),
		tools.Field("event_surfaces", surfaceList()),
	)
}

func eventSearchParams() *tools.ObjectSchema {
	return tools.Object(
		tools.Field("session_id", tools.String(descTargetSession)),
		tools.Req("query", tools.String("Literal full-text query over the target session.")),
		tools.Field("seq_from", tools.Integer(descSeqFrom)),
		tools.Field("seq_to", tools.Integer(descSeqTo)),
		tools.Field("time_from", tools.String(descTimeFrom)),
		tools.Field("time_to", tools.String(descTimeTo)),
		tools.Field("event_types", stringList(descEventTypes)),
		tools.Field("surfaces", surfaceList()),
	)
}

func sessionTraceParams() *tools.ObjectSchema {
	return tools.Object(tools.Field("session_id", tools.String(descTargetSession)))
}

func eventTraceParams() *tools.ObjectSchema {
	return tools.Object(
		tools.Field("session_id", tools.String(descTargetSession)),
		tools.Req("seq", tools.Integer(descTargetSeq)),
	)
}

func eventReadParams() *tools.ObjectSchema {
	return tools.Object(
		tools.Field("session_id", tools.String(descTargetSession)),
		tools.Req("seq", tools.Integer(descTargetSeq)),
		tools.Field("before", tools.Integer("Number of preceding raw events to summarize. Omit for none.")),
		tools.Field("after", tools.Integer("Number of following raw events to summarize. Omit for none.")),
	)
}

// args is a call's argument object by key. The pipeline has already checked
// it against the tool's schema, so a type mismatch here means the tool was
// invoked around the pipeline; it still fails closed, as INVALID_ARGS.
type args map[string]json.RawMessage

// callArgs parses a call's arguments; a call that carries only the model's
// raw string (a front end asking for a call card) is parsed from that.
func callArgs(c *tools.Call) (args, error) {
	raw := c.Args
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = tools.ParseArguments(c.Arguments)
	}
	return parseArgs(raw)
}

func parseArgs(raw json.RawMessage) (args, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return args{}, nil
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil || a == nil {
		return nil, badArgs("arguments must be a JSON object")
	}
	return a, nil
}

func badArgs(msg string) error {
	return &tools.Error{Name: tools.NameArgs, Code: tools.CodeInvalidArgs, Message: "invalid arguments: " + msg}
}

// value returns the raw value of name; an explicit null counts as absent, as
// it does for the pipeline's validation.
func (a args) value(name string) (json.RawMessage, bool) {
	v, ok := a[name]
	if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil, false
	}
	return v, true
}

func (a args) str(name string) (string, bool, error) {
	raw, ok := a.value(name)
	if !ok {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, badArgs(name + ": expected string")
	}
	return s, true, nil
}

// optStr returns a pointer to the string argument name, nil when absent.
func (a args) optStr(name string) (*string, error) {
	s, ok, err := a.str(name)
	if err != nil || !ok {
		return nil, err
	}
	return &s, nil
}

func (a args) strs(name string) ([]string, bool, error) {
	raw, ok := a.value(name)
	if !ok {
		return nil, false, nil
	}
	var s []string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, false, badArgs(name + ": expected array of strings")
	}
	if s == nil {
		s = []string{}
	}
	return s, true, nil
}

func (a args) boolean(name string) (bool, error) {
	raw, ok := a.value(name)
	if !ok {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		return false, badArgs(name + ": expected boolean")
	}
	return b, nil
}

// number returns the integer argument name as its JSON text.
func (a args) number(name string) (json.Number, bool, error) {
	raw, ok := a.value(name)
	if !ok {
		return "", false, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var n json.Number
	if err := dec.Decode(&n); err != nil {
		return "", false, badArgs(name + ": expected integer")
	}
	return n, true, nil
}

// nonNegativeSafe reports the value of n when it is an integer in
// 0..2^53-1, the range JavaScript's Number.isSafeInteger accepts. The
// pipeline's "integer" check lets 2^53 and beyond through on purpose.
func nonNegativeSafe(n json.Number) (int, bool) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return int(i), i >= 0 && i <= maxSafeInteger
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > maxSafeInteger {
		return 0, false
	}
	return int(f), true
}

// intArg decodes the optional integer argument name, failing with
// "<label> must be a non-negative safe integer".
func (a args) intArg(name, label string) (*int, error) {
	n, ok, err := a.number(name)
	if err != nil || !ok {
		return nil, err
	}
	v, safe := nonNegativeSafe(n)
	if !safe {
		return nil, invalidFilter(label + " must be a non-negative safe integer")
	}
	return &v, nil
}

// requiredInt decodes a required integer argument such as seq.
func (a args) requiredInt(name string) (int, error) {
	v, err := a.intArg(name, name)
	if err != nil {
		return 0, err
	}
	if v == nil {
		return 0, badArgs(name + ": required")
	}
	return *v, nil
}

// list decodes an optional array argument that must not be empty when given;
// label names it in the error.
func (a args) list(name, label string) ([]string, bool, error) {
	values, ok, err := a.strs(name)
	if err != nil || !ok {
		return nil, false, err
	}
	if len(values) == 0 {
		return nil, false, invalidFilter(label + " must contain at least one value when supplied")
	}
	return values, true, nil
}

func invalidFilter(msg string) error { return &sq.Error{Code: sq.CodeInvalidFilter, Message: msg} }

// normalizeQuery trims the query and collapses its whitespace runs (the
// JavaScript whitespace class) to single spaces.
func normalizeQuery(q string) (string, error) {
	n := sq.CollapseJS(q)
	if n == "" {
		return "", &sq.Error{Code: sq.CodeInvalidQuery, Message: "session-search query must contain non-whitespace text"}
	}
	if strings.ContainsRune(n, 0) {
		return "", &sq.Error{Code: sq.CodeInvalidQuery, Message: "session-search query must not contain NUL"}
	}
	return n, nil
}

// seqRange decodes an inclusive sequence range.
func (a args) seqRange(fromName, toName string) (from, to *int, err error) {
	if from, err = a.intArg(fromName, "sequence lower bound"); err != nil {
		return nil, nil, err
	}
	if to, err = a.intArg(toName, "sequence upper bound"); err != nil {
		return nil, nil, err
	}
	if from != nil && to != nil && *from > *to {
		return nil, nil, invalidFilter("session sequence range from must be less than or equal to to")
	}
	return from, to, nil
}

// timeRange decodes an inclusive timestamp range into float bounds. labels
// name the two arguments in errors and rng names the range.
func (a args) timeRange(fromName, toName, fromLabel, toLabel, rng string) (from, to *float64, err error) {
	lo, err := a.timestamp(fromName, fromLabel)
	if err != nil {
		return nil, nil, err
	}
	hi, err := a.timestamp(toName, toLabel)
	if err != nil {
		return nil, nil, err
	}
	if lo != nil && hi != nil && lo.after(*hi) {
		return nil, nil, invalidFilter("session " + rng + " range from must be less than or equal to to")
	}
	if lo != nil {
		v := lo.lowerBound()
		from = &v
	}
	if hi != nil {
		v := hi.upperBound()
		to = &v
	}
	return from, to, nil
}

func (a args) timestamp(name, label string) (*timestamp, error) {
	s, ok, err := a.str(name)
	if err != nil || !ok {
		return nil, err
	}
	ts, perr := parseTimestamp(s)
	switch perr {
	case tsPattern:
		return nil, invalidFilter("session " + label + " range must be an ISO 8601 timestamp with Z or a numeric offset")
	case tsInvalid:
		return nil, invalidFilter("session " + label + " range must be a valid ISO 8601 timestamp")
	}
	return &ts, nil
}

func seqFilter(from, to *int) sq.EventFilter {
	f := sq.EventFilter{Kind: sq.KindSeq}
	if from != nil {
		v := float64(*from)
		f.From = &v
	}
	if to != nil {
		v := float64(*to)
		f.To = &v
	}
	return f
}
