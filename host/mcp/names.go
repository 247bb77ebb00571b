package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// MaxToolName is the longest tool name providers accept (OpenAI and
// Anthropic both cap function names at 64 characters of [A-Za-z0-9_-]).
const MaxToolName = 64

// ToolPrefix starts the name of every MCP tool.
const ToolPrefix = "mcp__"

// serverSlug is a server name as it appears in tool names: characters
// providers refuse become "_", and runs of "_" collapse, so the "__" after
// it always ends it.
func serverSlug(name string) string {
	s := sanitize(name)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	if s == "" || s == "_" {
		return "server"
	}
	return s
}

func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// toolName is the registry name of tool on the server whose slug is slug:
// mcp__<slug>__<tool>, sanitized; a name over MaxToolName is cut and ends
// in a hash of the original server and tool names, so it stays unique.
func toolName(slug, server, tool string) string {
	name := ToolPrefix + slug + "__" + sanitize(tool)
	if len(name) <= MaxToolName {
		return name
	}
	return hashed(name, server, tool)
}

// hashed cuts name to leave room for "_" and 8 hex digits of a hash of the
// original names.
func hashed(name, server, tool string) string {
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name) > MaxToolName-len(suffix) {
		name = name[:MaxToolName-len(suffix)]
	}
	return name + suffix
}

// nameTools assigns registry names to one server's tools, in the server's
// order. Two tools whose names sanitize alike keep them apart
// deterministically: the first in byte order of the original names keeps
// the plain name, the others get the hashed form.
func nameTools(slug, server string, tools []string) []string {
	out := make([]string, len(tools))
	byName := map[string][]int{}
	for i, t := range tools {
		out[i] = toolName(slug, server, t)
		byName[out[i]] = append(byName[out[i]], i)
	}
	for name, idx := range byName {
		if len(idx) < 2 {
			continue
		}
		first := idx[0]
		for _, i := range idx[1:] {
			if tools[i] < tools[first] {
				first = i
			}
		}
		for _, i := range idx {
			if i != first {
				out[i] = hashed(name, server, tools[i])
			}
		}
	}
	return out
}

// uniqueSlugs gives each server a distinct slug, in the given order (callers
// sort by name): a later server whose slug is taken gets a numbered one.
func uniqueSlugs(names []string) []string {
	out := make([]string, len(names))
	taken := map[string]bool{}
	for i, n := range names {
		s := serverSlug(n)
		for k := 2; taken[s]; k++ {
			s = serverSlug(n) + "-" + strconv.Itoa(k)
		}
		taken[s] = true
		out[i] = s
	}
	return out
}
