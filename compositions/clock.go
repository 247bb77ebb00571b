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

// RuntimePath is the runtime config section: the determinism knobs of
// snapshot tests, which the composition's clock reads.
const RuntimePath = "runtime"

// RuntimeConfig is the runtime section.
type RuntimeConfig struct {
	Clock       string `mapstructure:"clock"`
	FixedTimeMs int64  `mapstructure:"fixed_time_ms"`
	IDs         string `mapstructure:"ids"`
}

// RuntimeSchema declares the runtime section. A project cannot set it:
// fixed times and predictable ids belong to test runs the user starts.
var RuntimeSchema = config.SchemaOf[RuntimeConfig](RuntimePath, map[string]config.Rule{
	"clock":         config.OneOf("system", "fixed"),
	"fixed_time_ms": config.IntAtLeast(0),
	"ids":           config.OneOf("random", "sequential"),
})

// newClock returns the clock rc describes (checked by RuntimeSchema).
func newClock(rc RuntimeConfig) *clock {
	c := &clock{sequential: rc.IDs == "sequential"}
	if rc.Clock == "fixed" {
		t := time.UnixMilli(rc.FixedTimeMs).UTC()
		c.fixed = &t
	}
	return c
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
