package timeout

import (
	"context"
	"fmt"
	"reflect"

	"github.com/seed-e9b4dba4/dsh/host"
	"github.com/seed-e9b4dba4/dsh/host/config"
	"github.com/seed-e9b4dba4/dsh/host/hook"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

// PluginName is the name the plugin is mounted under.
const PluginName = "timeout-policy"

// SectionPath is the plugins.timeout section.
const SectionPath = "plugins.timeout"

// Config is the plugins.timeout section, declared to host/config by
// ConfigSchema. Its one key, enabled, is the composition's switch for
// mounting the plugin; the policy itself has nothing to configure (each
// tool declares its own budget).
type Config struct {
	Enabled bool `mapstructure:"enabled"`
}

// ConfigSchema declares plugins.timeout; an untrusted project may switch
// the policy on or off.
var ConfigSchema = config.Schema{Path: SectionPath, Type: reflect.TypeFor[Config](), Safe: []string{"enabled"}}

// Plugin returns the timeout policy: one ordinary (not prepended) execute
// middleware, so wrappers registered before it run outside the deadline and
// wrappers registered after it run inside it.
func Plugin() host.Plugin {
	return host.Plugin{
		Name:     PluginName,
		Requires: []string{tools.ServiceKey.Name()},
		Apply:    apply,
	}
}

func apply(h *host.Host, _ host.Section) (host.Dispose, error) {
	reg, err := host.Require(h, tools.ServiceKey)
	if err != nil {
		return nil, err
	}
	remove := reg.Execute.Use(Middleware(reg.Get))
	return func() error { remove(); return nil }, nil
}

// Middleware returns the execute wrapper. lookup resolves the called tool's
// definition (normally Registry.Get); its Timeout is the budget.
func Middleware(lookup func(name string) (*tools.Definition, bool)) hook.Middleware[*tools.Call, tools.Result] {
	return func(ctx context.Context, call *tools.Call, next hook.Next[*tools.Call, tools.Result]) tools.Result {
		def, ok := lookup(call.Name)
		if !ok || def.Timeout <= 0 {
			return next(ctx, call)
		}
		// The reason is compared by identity, so only this wrapper's own
		// deadline counts: a nested deadline (ours or anyone's) that fired
		// first is that wrapper's business, reported by it.
		reason := &TimeoutReason{Code: Code, Timeout: def.Timeout}
		dctx, cancel := context.WithTimeoutCause(ctx, def.Timeout, reason)
		defer cancel()
		res := next(dctx, call)
		if context.Cause(dctx) != error(reason) {
			return res
		}
		return timedOut(reason, res)
	}
}

// timedOut replaces whatever the tool returned. The files it changed and
// the contexts it deferred stay recorded, because they happened regardless;
// the pipeline's own abort outcome keeps them for the same reason.
func timedOut(reason *TimeoutReason, res tools.Result) tools.Result {
	msg := fmt.Sprintf("tool call timed out after %sms", formatMs(reason.Timeout))
	out := tools.ErrorResult(&tools.Error{Name: ErrorName, Code: Code, Message: msg})
	out.AdditionalContexts = res.AdditionalContexts
	out.Mutations = res.Mutations
	return out
}
