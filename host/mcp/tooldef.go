package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// maxDescription bounds a tool description sent to the model.
const maxDescription = 8 << 10

// definitions turns a server's tool list into registry definitions; a tool
// whose schema is unusable is left out with a warning.
func (c *conn) definitions(list []*sdk.Tool) []*tools.Definition {
	names := make([]string, len(list))
	for i, t := range list {
		names[i] = t.Name
	}
	regNames := nameTools(c.slug, c.cfg.Name, names)
	out := make([]*tools.Definition, 0, len(list))
	for i, t := range list {
		raw, validate, err := inputSchema(t.InputSchema)
		if err != nil {
			c.m.opts.Log.Warn("mcp: tool left out", "server", c.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		out = append(out, c.definition(regNames[i], t, raw, validate))
	}
	return out
}

func (c *conn) definition(name string, t *sdk.Tool, raw json.RawMessage, validate func(json.RawMessage) []string) *tools.Definition {
	tool := t.Name
	desc := t.Description
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", tool, c.cfg.Name)
	}
	if len(desc) > maxDescription {
		cut := maxDescription
		for cut > 0 && !utf8Start(desc[cut]) {
			cut--
		}
		desc = desc[:cut] + "…"
	}
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	if title == "" {
		title = tool
	}
	readOnly := c.m.opts.TrustReadOnlyHints && t.Annotations != nil && t.Annotations.ReadOnlyHint
	d := &tools.Definition{
		Name:          name,
		Description:   desc,
		RawParameters: raw,
		ValidateArgs:  validate,
		Session:       c.m.opts.Session,
		Output:        tools.StringOutput,
		Effect:        tools.EffectExecute,
		Timeout:       c.m.opts.CallTimeout,
		Execute: func(ctx context.Context, call *tools.Call) (any, error) {
			return c.call(ctx, tool, call)
		},
	}
	kind := tools.KindOther
	if readOnly {
		d.Effect = tools.EffectRead
		d.ConcurrencySafe = func(*tools.Call) bool { return true }
		kind = tools.KindRead
	}
	server := c.cfg.Name
	d.PresentCall = func(call *tools.Call) *tools.CallView {
		var input any
		if json.Unmarshal(call.Args, &input) != nil {
			input = call.Arguments
		}
		return &tools.CallView{Kind: kind, Title: server + ": " + title, RawInput: input}
	}
	return d
}
