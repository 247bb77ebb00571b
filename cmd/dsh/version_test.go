package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionCommandPrintsVersionAndGo(t *testing.T) {
	r := newSandbox(t).run("version")
	if r.code != exitOK {
		t.Fatalf("exit code %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "dsh ") {
		t.Errorf("first line = %q, want dsh <version>", lines[0])
	}
	last := lines[len(lines)-1]
	if want := runtime.GOOS + "/" + runtime.GOARCH; !strings.HasPrefix(last, "go") || !strings.HasSuffix(last, want) {
		t.Errorf("last line = %q, want the Go version and %s", last, want)
	}
}

func TestReadBuild(t *testing.T) {
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{
			name: "no build info",
			want: "dsh devel\n" + runtime.Version() + " " + platform + "\n",
		},
		{
			name: "local build with vcs",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef"},
				{Key: "vcs.time", Value: "2026-01-02T03:04:05Z"},
				{Key: "vcs.modified", Value: "true"},
			}},
			want: "dsh devel\ncommit 0123456789abcdef (2026-01-02T03:04:05Z, modified)\ngo1.26.0 " + platform + "\n",
		},
		{
			name: "go install of a tagged version",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.3.0"}},
			want: "dsh v0.3.0\ngo1.26.0 " + platform + "\n",
		},
		{
			name: "clean commit",
			info: &debug.BuildInfo{GoVersion: "go1.26.0", Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "abc"},
				{Key: "vcs.modified", Value: "false"},
			}},
			want: "dsh devel\ncommit abc\ngo1.26.0 " + platform + "\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readBuild(tt.info, tt.info != nil).String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVersionFlagPrintsTheVersionCommandsOutput(t *testing.T) {
	s := newSandbox(t)
	flag := s.exec(execOptions{}, "--version")
	cmd := s.exec(execOptions{}, "version")
	if flag.code != exitOK || !strings.HasPrefix(flag.stdout, "dsh ") || flag.stdout != cmd.stdout {
		t.Fatalf("--version: exit %d %q, version: %q", flag.code, flag.stdout, cmd.stdout)
	}
}
