package codingtools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// optInt is an optional integer argument. Models sometimes send 10.0 for 10;
// an integral number is accepted, anything else is an argument error.
type optInt struct {
	set bool
	v   int64
}

func (o *optInt) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*o = optInt{}
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("expected an integer, got %s", b)
	}
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		*o = optInt{set: true, v: i}
		return nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return fmt.Errorf("expected an integer, got %s", n)
	}
	*o = optInt{set: true, v: int64(f)}
	return nil
}

// decodeArgs decodes a call's arguments, turning a decode failure into an
// INVALID_ARGS error that quotes the problem.
func decodeArgs(errName string, call *tools.Call, v any) error {
	args := call.Args
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	if err := json.Unmarshal(args, v); err != nil {
		return failf(errName, CodeInvalidArgs, "invalid arguments: %v", err)
	}
	return nil
}

// rawInput returns the call's arguments for display, falling back to the raw
// string when they are not JSON.
func rawInput(call *tools.Call) any {
	if json.Valid(call.Args) {
		return json.RawMessage(call.Args)
	}
	return call.Arguments
}
