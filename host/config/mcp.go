package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MCPServers returns mcp.servers: the MCP servers whose tools every session
// of the TUI and dsh run gets (and ACP sessions whose editor sends none),
// keyed by server name, disabled ones left out. They are read from the YAML
// as written (names and env variable names keep their case); a server a
// higher layer names replaces the lower layer's entry of that name whole.
// The mcp section's other keys belong to host/mcp (mcp.ConfigSchema).
func (c *Config) MCPServers() map[string]MCPServer { return maps.Clone(c.mcpServers) }

// MCPServer is one entry of mcp.servers, in the shape of the common
// mcpServers JSON: command, args and env for stdio; url and headers (and
// type http or sse) otherwise. Disabled keeps a server of a lower layer off.
type MCPServer struct {
	Type     string            `json:"type,omitempty"`
	Command  string            `json:"command,omitempty"`
	Args     []string          `json:"args,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	URL      string            `json:"url,omitempty"`
	Headers  map[string]string `json:"headers,omitempty"`
	Disabled bool              `json:"disabled,omitempty"`
}

// mcpServersKey is the map of servers; each server is the layer key
// mcp.servers.<name>, so layers, origins and the project allowlist treat
// it like any other key.
const mcpServersKey = "mcp.servers"

// parseMCPServers reads mcp.servers from the raw YAML (viper would fold
// the case of names and env variables) into l.
func parseMCPServers(data []byte, p provenance, l layer) []error {
	var doc struct {
		MCP struct {
			Servers map[string]any `yaml:"servers"`
		} `yaml:"mcp"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return []error{&Error{Key: mcpServersKey, Source: p.source, Problem: "must be a mapping of server names to server entries"}}
	}
	names := make([]string, 0, len(doc.MCP.Servers))
	for name := range doc.MCP.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var errs []error
	for _, name := range names {
		key := mcpServersKey + "." + name
		s, problem := decodeMCPServer(name, doc.MCP.Servers[name])
		if problem != "" {
			errs = append(errs, &Error{Key: key, Source: p.source, Problem: problem})
			continue
		}
		p.set(l, key, s)
	}
	return errs
}

func decodeMCPServer(name string, raw any) (MCPServer, string) {
	if strings.TrimSpace(name) == "" {
		return MCPServer{}, "needs a name"
	}
	if _, ok := raw.(map[string]any); !ok {
		return MCPServer{}, "must be a mapping such as {command: npx, args: [-y, some-mcp-server]} or {url: https://...}"
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return MCPServer{}, "must hold only strings, lists of strings and mappings of strings"
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s MCPServer
	if err := dec.Decode(&s); err != nil {
		return MCPServer{}, "is not a valid server entry (" + strings.TrimPrefix(err.Error(), "json: ") + "); use type, command, args, env, url, headers or disabled"
	}
	switch {
	case s.Disabled:
	case s.Command == "" && s.URL == "":
		return MCPServer{}, "needs a command (stdio) or a url (http, sse)"
	case s.Type != "" && s.Type != "stdio" && s.Type != "http" && s.Type != "sse":
		return MCPServer{}, fmt.Sprintf("has type %q; use stdio, http or sse", s.Type)
	}
	return s, ""
}

// mcpServersFrom collects the winning server entries, leaving out disabled
// ones.
func mcpServersFrom(winners map[string]setting) map[string]MCPServer {
	out := map[string]MCPServer{}
	for k, s := range winners {
		name, ok := strings.CutPrefix(k, mcpServersKey+".")
		if !ok {
			continue
		}
		if srv, ok := s.value.(MCPServer); ok && !srv.Disabled {
			out[name] = srv
		}
	}
	return out
}
