package permissions

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// protectedNames are directory names whose contents always ask before a
// change, wherever they are: dsh's project config (.dsh, which can turn
// approvals off for every later start) and VCS internals (.git, whose
// config and hooks run code on the next git command).
var protectedNames = []string{".dsh", ".git"}

// Protect marks dirs (dsh's own data: its home, its session logs, its index)
// as protected: in every mode but bypass, reading or changing anything under
// them asks, even inside the workspace, and an "allow always" answer does not
// cover it. A read of a folder that contains one asks too, since glob and
// grep would walk into it. Trusted read roots inside a protected dir stay
// readable. Empty entries are ignored.
func (s *Service) Protect(dirs ...string) (remove func()) {
	var ids []int
	s.mu.Lock()
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		s.nextID++
		s.protected[s.nextID] = filepath.Clean(d)
		ids = append(ids, s.nextID)
	}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, id := range ids {
			delete(s.protected, id)
		}
	}
}

// ProtectedRoots returns the directories given to Protect, sorted.
func (s *Service) ProtectedRoots() []string { return s.protectedRoots() }

func (s *Service) protectedRoots() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.protected))
	for _, d := range s.protected {
		out = append(out, d)
	}
	slices.Sort(out)
	return out
}

// protection returns the reason call must ask whatever the mode (bypass
// aside) and whatever was granted before, or "" when it touches nothing
// protected. Only reads and writes are checked: commands ask anyway.
func (s *Service) protection(call *tools.Call, def *tools.Definition) string {
	if def.Effect != tools.EffectRead && def.Effect != tools.EffectWrite {
		return ""
	}
	paths, ok := callPaths(call, def)
	if !ok {
		return ""
	}
	roots := s.protectedRoots()
	var trusted []string
	if def.Effect == tools.EffectRead {
		trusted = s.trustedRoots(sessionID(call))
	}
	var hits []string
	for _, p := range paths {
		if def.Effect == tools.EffectWrite && hasProtectedName(p) {
			hits = append(hits, p)
			continue
		}
		if slices.ContainsFunc(trusted, func(r string) bool { return within(r, p) }) {
			continue
		}
		for _, r := range roots {
			if within(r, p) || (def.Effect == tools.EffectRead && within(p, r)) {
				hits = append(hits, p)
				break
			}
		}
	}
	if len(hits) == 0 {
		return ""
	}
	if def.Effect == tools.EffectRead {
		return "reads dsh's own data (session logs, search index or config), which always asks: " + list(hits)
	}
	return "changes a protected path (dsh's config or data, or VCS internals such as .git), which always asks: " + list(hits)
}

// hasProtectedName reports whether p, as written or with symlinks resolved,
// has a protected directory name among its components.
func hasProtectedName(p string) bool {
	for _, q := range []string{p, resolve(p)} {
		for _, part := range strings.Split(filepath.ToSlash(q), "/") {
			if slices.Contains(protectedNames, part) {
				return true
			}
		}
	}
	return false
}
