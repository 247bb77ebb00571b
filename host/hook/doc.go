// Package hook provides the two extension shapes plugins use to change host
// behaviour without the host knowing them: ordered around-middleware chains
// (Chain) and ordered observers (Observers).
//
// A Chain runs its middlewares outermost-first in registration order;
// prepended middlewares run before ordinary ones. Each middleware receives the
// input and a next function; it may call next with a different context (the
// only thing a wrapper may replace, by convention of each chain's owner) and
// may wrap or replace the result, or return without calling next. Every Use
// returns a remove function, so a plugin's disposer can unwind exactly what
// it registered. Chains and observer lists are safe for concurrent use; a run
// sees the registrations present when it started.
package hook
