// Package compositions assembles dsh's runnable configurations: the ACP
// composition (dsh acp), the TUI composition (dsh, dsh tui) and the headless
// one (dsh run). Each decides which host services and plugins it mounts from
// the loaded config: ACP and TUI mount the session-query service with its
// FTS index; headless mounts them only when the model-facing session-query
// plugin is enabled (it needs the service); the session-query, timeout and
// spill plugins are mounted only when enabled.
//
// Dependencies point one way: cmd/dsh calls compositions, which import
// plugins and host packages; nothing below imports this package.
package compositions
