//go:build !linux && !darwin

package procgroup

// onlyWatcher cannot list a group's members portably, so it keeps the guard
// standing: the group is killed when its Tracker closes or this process
// exits.
func onlyWatcher(pgid, watcher int) bool { return false }
