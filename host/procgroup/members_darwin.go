package procgroup

import "golang.org/x/sys/unix"

// sZomb is p_stat of a zombie (sys/proc.h SZOMB).
const sZomb = 5

// onlyWatcher reports whether every live process in group pgid is the
// watcher, asking the kernel through sysctl kern.proc.pgrp. When that fails
// it answers false, which keeps the guard standing.
func onlyWatcher(pgid, watcher int) bool {
	procs, err := unix.SysctlKinfoProcSlice("kern.proc.pgrp", pgid)
	if err != nil {
		return false
	}
	for _, p := range procs {
		if int(p.Proc.P_pid) != watcher && p.Proc.P_stat != sZomb {
			return false
		}
	}
	return true
}
