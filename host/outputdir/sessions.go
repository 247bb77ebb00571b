package outputdir

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// SessionDir names a session's directory below a store's root without
// putting the id, which a client chooses, into a path. Prune recognises
// exactly these names.
func SessionDir(sessionID string) string {
	sum := sha256.Sum256([]byte(sessionID))
	return "session-" + hex.EncodeToString(sum[:])[:12]
}

// Trusts records the read trust each session was given on its directory,
// so the trust is given once and withdrawn once: when the session ends
// (Forget) or the store closes (Close). The zero value is ready to use.
type Trusts struct {
	mu      sync.Mutex
	untrust map[string]func()
}

// Has reports whether the session's trust is recorded.
func (t *Trusts) Has(sessionID string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.untrust[sessionID]
	return ok
}

// Add calls trust for the session unless its trust is already recorded,
// and records the untrust it returns (nil: nothing to withdraw).
func (t *Trusts) Add(sessionID string, trust func() (untrust func())) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.untrust[sessionID]; ok {
		return
	}
	if t.untrust == nil {
		t.untrust = map[string]func(){}
	}
	t.untrust[sessionID] = trust()
}

// Forget withdraws the session's trust; its files stay.
func (t *Trusts) Forget(sessionID string) {
	t.mu.Lock()
	untrust := t.untrust[sessionID]
	delete(t.untrust, sessionID)
	t.mu.Unlock()
	if untrust != nil {
		untrust()
	}
}

// Close withdraws every session's trust.
func (t *Trusts) Close() {
	t.mu.Lock()
	all := t.untrust
	t.untrust = nil
	t.mu.Unlock()
	for _, untrust := range all {
		if untrust != nil {
			untrust()
		}
	}
}
