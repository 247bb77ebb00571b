package sandbox

import (
	"path/filepath"
	"testing"
)

func TestDenialsTellSandboxFromFilePermissions(t *testing.T) {
	ws := t.TempDir()
	home := t.TempDir()
	p := Policy{Write: []string{ws}, ReadOnly: []string{filepath.Join(ws, ".git")}, Hidden: []string{home}}
	cases := []struct {
		name, out string
		want      []Denial
	}{
		{"redirect outside", "bash: /etc/hosts: Permission denied\n[exit code: 1]",
			[]Denial{{Kind: "write", Path: "/etc/hosts", Line: "bash: /etc/hosts: Permission denied"}}},
		{"touch quoted", "touch: cannot touch '/var/x': Permission denied",
			[]Denial{{Kind: "write", Path: "/var/x", Line: "touch: cannot touch '/var/x': Permission denied"}}},
		{"go error", "open .git/config: permission denied",
			[]Denial{{Kind: "write", Path: filepath.Join(ws, ".git/config"), Line: "open .git/config: permission denied"}}},
		{"python hidden read", "PermissionError: [Errno 13] Permission denied: '" + home + "/x'",
			[]Denial{{Kind: "read", Path: home + "/x", Line: "PermissionError: [Errno 13] Permission denied: '" + home + "/x'"}}},
		{"network", "curl: (7) Failed to connect to 127.0.0.1 port 80: Permission denied",
			[]Denial{{Kind: "network", Line: "curl: (7) Failed to connect to 127.0.0.1 port 80: Permission denied"}}},
		{"allowed path is the file's own mode", "cat: " + ws + "/secret: Permission denied", nil},
		{"no path", "make: *** [all] Operation not permitted",
			[]Denial{{Line: "make: *** [all] Operation not permitted"}}},
		{"no denial", "ok\n[exit code: 0]", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Denials([]byte(c.out), p, ws)
			if len(got) != len(c.want) {
				t.Fatalf("Denials = %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("Denials[%d] = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}
