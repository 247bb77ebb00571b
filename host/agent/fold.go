package agent

import "github.com/seed-e9b4dba4/dsh/host/session"

// shadowed reports whether a compaction replaced the surface node seq.
func shadowed(fold *session.SurfaceFold, seq int) bool {
	return fold.Surface(seq) == session.SurfaceShadowed
}

// lastReplacement is the seq of the latest replacing event, or -1.
func lastReplacement(fold *session.SurfaceFold) int {
	rs := fold.Replacements()
	if len(rs) == 0 {
		return -1
	}
	return rs[len(rs)-1].Seq
}
