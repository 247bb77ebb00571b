// Package bench holds what the benchmark commands share: percentiles and
// timing (stats.go), and the ACP cold-start driver (acp.go) that both
// internal/acpcold and internal/bench/dshbench run against the built binary.
// The dshbench command prints the table of `make bench`.
// Nothing in the product imports it.
package bench
