package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery"
	"github.com/seed-e9b4dba4/dsh/host/termtext"
)

func newSessionsTraceCmd(g *globals) *cobra.Command {
	var all, asJSON bool
	cmd := &cobra.Command{
		Use:   "trace ID",
		Short: "Show a session's lineage: the sessions it was forked from and its forks",
		Long: `Show the lineage tree around a session: its ancestors up to the root (the
sessions it was forked or delegated from) and every descendant, each with its
creation time and title. The session itself is marked with *.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: g.sessionArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			env, err := g.openQuery()
			if err != nil {
				return err
			}
			defer env.Close()
			ctx := cmd.Context()
			target, err := env.scope(ctx, args[0], all)
			if err != nil {
				return err
			}
			tr, err := env.Query.TraceSession(ctx, target.Header.ID)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(g.stdout, traceJSON(tr))
			}
			ids := []string{tr.Target.Header.ID}
			for _, a := range tr.Ancestors {
				ids = append(ids, a.Header.ID)
			}
			walkLineage(tr.Descendants, 0, func(n sessionquery.LineageNode, _ int) { ids = append(ids, n.Session.Header.ID) })
			titles := env.titles(ctx, ids)
			line := func(r sessionquery.SessionRecord, mark string) string {
				t := "untitled"
				if v, ok := titles[r.Header.ID]; ok {
					t = oneLine(v, 60)
				}
				return fmt.Sprintf("%s%s  %s  %s", mark, termtext.Line(r.Header.ID), formatTime(r.Header.CreatedAt), t)
			}
			writeLineage(g.stdout, tr, line)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all-workspaces", false, "allow a session of another workspace")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the lineage as JSON")
	return cmd
}

// walkLineage visits descendants depth-first with an explicit stack, so a
// chain thousands of forks deep needs no recursion.
func walkLineage(nodes []sessionquery.LineageNode, depth int, visit func(n sessionquery.LineageNode, depth int)) {
	type item struct {
		node  sessionquery.LineageNode
		depth int
	}
	stack := make([]item, 0, len(nodes))
	for i := len(nodes) - 1; i >= 0; i-- {
		stack = append(stack, item{nodes[i], depth})
	}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		visit(it.node, it.depth)
		for i := len(it.node.Descendants) - 1; i >= 0; i-- {
			stack = append(stack, item{it.node.Descendants[i], it.depth + 1})
		}
	}
}

func writeLineage(w io.Writer, tr sessionquery.LineageTrace, line func(sessionquery.SessionRecord, string) string) {
	depth := 0
	if !tr.Complete && tr.UnresolvedParentID != nil {
		fmt.Fprintf(w, "(forked from %s, which is not among your sessions)\n", termtext.Line(*tr.UnresolvedParentID))
	}
	for i := len(tr.Ancestors) - 1; i >= 0; i-- {
		fmt.Fprintf(w, "%s%s\n", strings.Repeat("  ", depth), line(tr.Ancestors[i], ""))
		depth++
	}
	fmt.Fprintf(w, "%s%s\n", strings.Repeat("  ", depth), line(tr.Target, "* "))
	walkLineage(tr.Descendants, depth+1, func(n sessionquery.LineageNode, d int) {
		fmt.Fprintf(w, "%s%s\n", strings.Repeat("  ", d), line(n.Session, ""))
	})
}
