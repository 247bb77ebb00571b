// Package tuitest drives a terminal UI on a tcell simulation screen, for
// the tests of host/tui and of the compositions that run it. A Driver hands
// the UI a screen that keeps its size across tview's Init and an AfterDraw
// that records each frame as text, runs the UI in a goroutine, and then
// types into it, waits for what it shows and exits it with Ctrl+C twice.
//
// Every wait is bounded by Driver.Limit, which only decides when a broken
// test gives up, never what a passing one sees: frames arrive through a
// channel, not by sleeping. Only tests import this package; it imports
// tcell alone, so host/tui's own tests can use it.
package tuitest
