// Package termtext makes untrusted text safe to print on a terminal.
//
// Everything dsh shows a person comes, in part, from places it does not
// control: model replies, tool output, session logs, file names. A terminal
// interprets some of those characters: C0 and C1 controls start escape
// sequences (CSI colours, OSC 8 links, OSC 52 clipboard writes, title
// changes), and Unicode bidirectional controls reorder what is displayed
// (Trojan Source). This package is the one place that decides which
// characters must not reach a terminal and how they are shown instead: as a
// visible escape (\x1b, \u202e) that a reader can see and nothing
// interprets. Invalid UTF-8 becomes U+FFFD.
//
// Every front end that writes text to a terminal (cmd/dsh and host/tui) uses
// it; it has no dependencies and no state, so anyone may call it.
package termtext
