// Package bench holds the search benchmarks' shared measurement helpers;
// its searchbench command prints the comparison table of `make bench`.
// Nothing in the product imports it.
package bench
