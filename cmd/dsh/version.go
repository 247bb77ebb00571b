package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the dsh version, commit and Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info, ok := debug.ReadBuildInfo()
			_, err := fmt.Fprint(g.stdout, readBuild(info, ok).String())
			return err
		},
	}
}

// build describes the running binary.
type build struct {
	Version    string // module version, or "devel" for a local build
	Commit     string // VCS revision, if the build recorded it
	CommitTime string
	Modified   bool // built from a working tree with uncommitted changes
	GoVersion  string
	Platform   string
}

// readBuild extracts what the toolchain recorded about this binary.
func readBuild(info *debug.BuildInfo, ok bool) build {
	b := build{Version: "devel", GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if !ok || info == nil {
		return b
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		b.Version = v
	}
	if info.GoVersion != "" {
		b.GoVersion = info.GoVersion
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

func (b build) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "dsh %s\n", b.Version)
	if b.Commit != "" {
		var notes []string
		if b.CommitTime != "" {
			notes = append(notes, b.CommitTime)
		}
		if b.Modified {
			notes = append(notes, "modified")
		}
		fmt.Fprintf(&sb, "commit %s", b.Commit)
		if len(notes) > 0 {
			fmt.Fprintf(&sb, " (%s)", strings.Join(notes, ", "))
		}
		sb.WriteByte('\n')
	}
	fmt.Fprintf(&sb, "%s %s\n", b.GoVersion, b.Platform)
	return sb.String()
}
