//go:build race

package searchtext

// raceEnabled is whether the tests run under the race detector, which
// slows SQLite (pure Go here) some thirtyfold.
const raceEnabled = true
