package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/compositions"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
)

// Shell completion (dsh completion bash|zsh|fish|powershell) completes
// session ids, profiles, config keys and event types from what this dsh
// home holds. A completion never writes, never warns and gives up quietly:
// a broken configuration completes nothing rather than print into the
// user's command line.

// completionTimeout bounds a completion's reads (the catalog, the index).
const completionTimeout = 2 * time.Second

// maxCompletions bounds the session ids offered at once.
const maxCompletions = 200

// completeSessionIDs offers the ids starting with what was typed, this
// workspace's first, each with its title as the description.
func (g *globals) completeSessionIDs(ctx context.Context, toComplete string) ([]string, cobra.ShellCompDirective) {
	cfg, err := config.Load(g.configOptions())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cwd, err := g.workdir()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ws, err := session.ResolveWorkspace(cwd)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cat, err := compositions.OpenCatalog(cfg, func(string) {})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer cat.Close()
	ctx, cancel := context.WithTimeout(ctx, completionTimeout)
	defer cancel()
	page, err := cat.Query.ListSummaries(ctx, sessionquery.SummaryRequest{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var here, elsewhere []string
	for _, s := range page.Items {
		id := s.Header.ID
		if !strings.HasPrefix(id, toComplete) {
			continue
		}
		desc := "untitled"
		if s.Title != nil {
			desc = oneLine(s.Title.Title, 60)
		}
		if ws.Holds(s.Header.Cwd) {
			here = append(here, id+"\t"+desc)
		} else {
			elsewhere = append(elsewhere, id+"\t"+desc+" ("+workspaceOf(s.Header)+")")
		}
	}
	out := append(here, elsewhere...)
	if len(out) > maxCompletions {
		out = out[:maxCompletions]
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// sessionArg completes a command's single session-id argument.
func (g *globals) sessionArg(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return g.completeSessionIDs(cmd.Context(), toComplete)
}

// completeProfiles offers the embedded profiles and the home's own.
func (g *globals) completeProfiles(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	home := ""
	if ts, err := config.TrustFor(g.configOptions()); err == nil {
		home = filepath.Dir(ts.Path())
	}
	return config.Profiles(home), cobra.ShellCompDirectiveNoFileComp
}

// completeSetFlag offers KEY= for --set KEY=VALUE.
func (g *globals) completeSetFlag(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cfg, err := config.Load(g.configOptions())
	if err != nil || strings.Contains(toComplete, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, k := range cfg.Keys() {
		if strings.HasPrefix(k, toComplete) {
			out = append(out, k+"=")
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// completeEventTypes offers the types sessions search --type accepts.
func completeEventTypes(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return searchableTypes(), cobra.ShellCompDirectiveNoFileComp
}
