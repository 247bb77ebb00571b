package procgroup

import (
	"bytes"
	"os"
	"strconv"
)

// onlyWatcher reports whether every live process in group pgid is the
// watcher. It reads /proc; when that fails it answers false, which keeps
// the guard standing.
func onlyWatcher(pgid, watcher int) bool {
	members, err := members(pgid)
	if err != nil {
		return false
	}
	for _, pid := range members {
		if pid != watcher {
			return false
		}
	}
	return true
}

// members lists the pids of the live (not zombie) processes in group pgid.
func members(pgid int) ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	var out []int
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited while we looked
		}
		if state, pgrp, ok := parseStat(b); ok && pgrp == pgid && state != 'Z' && state != 'X' {
			out = append(out, pid)
		}
	}
	return out, nil
}

// parseStat reads the state and process group from /proc/PID/stat:
// "pid (comm) state ppid pgrp ...", where comm may hold spaces and parens.
func parseStat(b []byte) (state byte, pgrp int, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	pgrp, err := strconv.Atoi(string(f[2]))
	return f[0][0], pgrp, err == nil
}
