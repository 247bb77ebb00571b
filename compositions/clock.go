package compositions

import (
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// clock supplies times and ids. Snapshot runs use a fixed clock and
// sequential, UUID-shaped ids so that logs and frames are reproducible.
type clock struct {
	fixed      *time.Time
	sequential bool

	mu   sync.Mutex
	next uint64
}

func newClock(rc config.RuntimeConfig) (*clock, error) {
	c := &clock{}
	switch rc.Clock {
	case "", "system":
	case "fixed":
		t := time.UnixMilli(rc.FixedTimeMs).UTC()
		c.fixed = &t
	default:
		return nil, fmt.Errorf("runtime.clock %q is not supported (use system or fixed)", rc.Clock)
	}
	switch rc.IDs {
	case "", "random":
	case "sequential":
		c.sequential = true
	default:
		return nil, fmt.Errorf("runtime.ids %q is not supported (use random or sequential)", rc.IDs)
	}
	return c, nil
}

// Now returns the current time, or the fixed time.
func (c *clock) Now() time.Time {
	if c.fixed != nil {
		return *c.fixed
	}
	return time.Now()
}

// NewID returns a random UUID, or the next sequential UUID-shaped id.
func (c *clock) NewID() string {
	if !c.sequential {
		return uuid.NewString()
	}
	c.mu.Lock()
	c.next++
	n := c.next
	c.mu.Unlock()
	return fmt.Sprintf("00000000-0000-4000-8000-%012x", n)
}

// Random returns the entropy source for generated names (spill files): nil
// (crypto/rand) normally, a fixed-seed stream when ids are sequential.
func (c *clock) Random() io.Reader {
	if !c.sequential {
		return nil
	}
	return rand.NewChaCha8([32]byte{'d', 's', 'h'})
}
