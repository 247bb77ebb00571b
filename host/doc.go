// Package host is the plugin host: a typed service registry, plugins with
// declared service requirements, activation in dependency order and disposal
// in reverse.
//
// A composition builds a Host, provides the base services it mounts, and
// calls Start with the plugins it wants. Plugins ask the host for what they
// need (Get) and never reach into each other. Start fails, naming the plugin,
// when a required service is missing, when two plugins provide the same
// service, or when requirements form a cycle; Close unwinds every activated
// plugin in reverse activation order and then the base services.
//
// The sub-packages of host are the runtime concepts (session, store, tools,
// llm, agent, sessionquery, ...). Nothing under host imports plugins or
// compositions.
package host
