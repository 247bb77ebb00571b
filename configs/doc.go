// Package configs holds dsh's built-in configuration, embedded into the
// binary: default.yaml, which defines every config key with its default and a
// one-line comment, and profiles/<name>.yaml, the shipped profiles that a
// user selects with --profile.
//
// The files are data, not code: host/config parses and validates them like
// any other layer, so a key added to the Config struct must be added to
// default.yaml too (the config tests fail otherwise). Only host/config and
// tests should read this package.
package configs
