//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
)

// defaultMaxZygotes bounds the zygotes one sandbox keeps: one per
// distinct policy (a session's workspace and temporary directory, network
// on or off). Beyond it an idle one is stopped, and when all are busy the
// command gets a fresh launcher.
const defaultMaxZygotes = 6

// maxFailed bounds the policies remembered as having no zygote.
const maxFailed = 64

// Start starts cmd under p: through the zygote of p, started on first use,
// while the rules it enforces are still the ones Plan builds now; through
// a fresh launcher when no zygote can take it.
func (s *landlockSandbox) Start(cmd *exec.Cmd, p Policy) (*Process, error) {
	if sup := s.Support(); !sup.Available {
		return nil, fmt.Errorf("cannot run the command sandboxed: %s", sup.Reason)
	}
	if err := startable(cmd); err != nil {
		return nil, err
	}
	policy, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	plan := planKey(Plan(p), p.Network)
	// A zygote that died between its choice and the request is replaced
	// once; a second failure is the command's.
	for attempt := 0; ; attempt++ {
		z, err := s.zygoteFor(string(policy), plan)
		if err != nil {
			return nil, err
		}
		if z == nil {
			return startThrough(s.launcher, cmd, p)
		}
		proc, err := z.start(cmd, p, func() { s.release(z) })
		if errors.Is(err, errZygoteGone) {
			s.discard(z)
			if attempt == 0 {
				continue
			}
		}
		return proc, err
	}
}

// discard drops z, which cannot be reached, from the pool.
func (s *landlockSandbox) discard(z *zygote) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z.retired = true
	for i, y := range s.zygotes {
		if y == z {
			s.zygotes = append(s.zygotes[:i], s.zygotes[i+1:]...)
			if !s.closed {
				s.stop(z)
			}
			return
		}
	}
}

// zygoteFor returns the zygote for policy enforcing plan, marked busy,
// starting it if needed; nil when the pool is full of busy zygotes.
func (s *landlockSandbox) zygoteFor(policy, plan string) (*zygote, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("the sandbox is closed")
	}
	s.uses++
	var found *zygote
	live := s.zygotes[:0]
	for _, z := range s.zygotes {
		switch {
		case z.dead():
			z.ctl.Close()
			continue
		case z.policy == policy && !z.retired && z.report.Plan == plan:
			found = z
		case z.policy == policy:
			// Stale: the files it planned from changed, as a new file at
			// the workspace root does.
			z.retired = true
			if z.busy == 0 {
				s.stop(z)
				continue
			}
		}
		live = append(live, z)
	}
	s.zygotes = live
	if found != nil {
		found.busy++
		found.lastUse = s.uses
		return found, nil
	}
	if len(s.zygotes) >= s.maxZygotes && !s.evictIdle() {
		return nil, nil
	}
	if s.failed[policy] {
		return nil, nil
	}
	z, err := startZygote(s.launcher, policy, s.replyTimeout)
	if err != nil {
		// A fresh launcher may still work (say dsh's binary is hidden
		// from the zygote's rules) and reports its own error if not; this
		// policy gets no zygote again.
		if s.failed == nil || len(s.failed) >= maxFailed {
			s.failed = map[string]bool{}
		}
		s.failed[policy] = true
		return nil, nil
	}
	z.busy, z.lastUse = 1, s.uses
	s.zygotes = append(s.zygotes, z)
	return z, nil
}

// evictIdle stops the least recently used idle zygote; false when none is
// idle. s.mu is held.
func (s *landlockSandbox) evictIdle() bool {
	idx := -1
	for i, z := range s.zygotes {
		if z.busy == 0 && (idx < 0 || z.lastUse < s.zygotes[idx].lastUse) {
			idx = i
		}
	}
	if idx < 0 {
		return false
	}
	s.stop(s.zygotes[idx])
	s.zygotes = append(s.zygotes[:idx], s.zygotes[idx+1:]...)
	return true
}

// release ends one command's use of z.
func (s *landlockSandbox) release(z *zygote) {
	s.mu.Lock()
	defer s.mu.Unlock()
	z.busy--
	if z.retired && z.busy == 0 && !s.closed {
		for i, y := range s.zygotes {
			if y == z {
				s.zygotes = append(s.zygotes[:i], s.zygotes[i+1:]...)
				break
			}
		}
		s.stop(z)
	}
}

// stop ends z in the background; Close waits for it.
func (s *landlockSandbox) stop(z *zygote) { s.stopping.Go(z.close) }

// Close stops every zygote and waits until they exited.
func (s *landlockSandbox) Close() error {
	s.mu.Lock()
	zs := s.zygotes
	s.zygotes, s.closed = nil, true
	s.mu.Unlock()
	for _, z := range zs {
		z.close()
	}
	s.stopping.Wait()
	return nil
}
