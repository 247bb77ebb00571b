package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxResultBytes bounds the text one call returns to the pipeline; the
// spill policy, when mounted, moves what is still too long to a file.
const maxResultBytes = 1 << 20

// resultText renders a tool result as the text the model reads. dsh's
// providers take text-only tool results, so images, audio and binary
// resources become a placeholder that says what was there.
func resultText(server string, res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		parts = append(parts, contentText(server, c))
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if len(text) > maxResultBytes {
		cut := maxResultBytes
		for cut > 0 && !utf8Start(text[cut]) {
			cut--
		}
		text = text[:cut] + fmt.Sprintf("\n[output truncated: the server returned %d bytes, the first %d are shown]", len(text), cut)
	}
	return text
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

func contentText(server string, c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image from MCP server %s: %s, %d bytes; not shown, this model reads text only]", server, orUnknown(c.MIMEType), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio from MCP server %s: %s, %d bytes; not shown, this model reads text only]", server, orUnknown(c.MIMEType), len(c.Data))
	case *sdk.ResourceLink:
		s := "[resource link: " + c.URI
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.Description != "" {
			s += " — " + c.Description
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return "[empty embedded resource]"
		}
		if r.Text != "" || len(r.Blob) == 0 {
			return fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)
		}
		return fmt.Sprintf("[resource %s: %s, %d bytes of binary data; not shown]", r.URI, orUnknown(r.MIMEType), len(r.Blob))
	default:
		b, err := json.Marshal(c)
		if err != nil {
			return "[unreadable content]"
		}
		return string(b)
	}
}

func orUnknown(mime string) string {
	if mime == "" {
		return "unknown type"
	}
	return mime
}
