package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/seed-e9b4dba4/dsh/host/sessionquery/searchindex"
)

func newIndexCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Inspect or rebuild the session search index",
		Long: `The search index (session_query.path, default $DSH_HOME/session-query.db) is
derived from the session logs and safe to delete: dsh rebuilds it. Every dsh
process on the same $DSH_HOME shares it and keeps it up to date as sessions
change.`,
	}
	requireSubcommand(cmd)
	cmd.AddCommand(newIndexStatusCmd(g), newIndexRebuildCmd(g), newIndexVerifyCmd(g))
	return cmd
}

// withIndex opens the session catalog, runs fn on its search index and closes
// the catalog when fn returns.
func (g *globals) withIndex(fn func(ix *searchindex.Index) error) error {
	env, err := g.openQuery()
	if err != nil {
		return err
	}
	defer env.Close()
	ix, err := env.index()
	if err != nil {
		return err
	}
	return fn(ix)
}

// progress reports a long operation on w: a bar redrawn in place on a
// terminal, or (when lines is set) a plain line every tenth otherwise.
type progress struct {
	w     io.Writer
	label string
	tty   bool
	lines bool
	last  time.Time
	step  int // last tenth printed as a plain line
	drawn bool
}

func newProgress(w io.Writer, label string) *progress {
	return &progress{w: w, label: label, tty: isTerminal(w), step: -1}
}

// plainLines makes a progress report on a non-terminal too.
func (p *progress) plainLines() *progress {
	p.lines = true
	return p
}

func (p *progress) update(done, total int) {
	if total <= 0 {
		return
	}
	switch {
	case p.tty:
		if done < total && time.Since(p.last) < 100*time.Millisecond {
			return
		}
		p.last = time.Now()
		const width = 30
		filled := done * width / total
		fmt.Fprintf(p.w, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total)
		p.drawn = true
	case p.lines:
		if tenth := done * 10 / total; tenth > p.step {
			p.step = tenth
			fmt.Fprintf(p.w, "%s: %d/%d\n", p.label, done, total)
		}
	}
}

// done clears the bar.
func (p *progress) done() {
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// isTerminal reports whether f (a writer or reader) is a terminal.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}
