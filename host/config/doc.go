// Package config loads dsh's configuration: the embedded defaults of
// configs/default.yaml overlaid, lowest to highest precedence, by a profile,
// $DSH_HOME/config.yaml, <cwd>/.dsh/config.yaml, a --config file, DSH_*
// environment variables and flags. viper merges the layers; this package
// owns the key tree, strict validation and the origin of every value.
//
// The key tree is the loader's own keys (the Config struct: home, which
// locates dsh's data and every layer found through it, plus mcp.servers, a
// map a Schema cannot declare) and the sections other packages own: the
// package that reads a section (host/store for sessions, host/agent,
// host/mcp, host/sessionquery/searchindex, host/permissions, host/sandbox,
// host/codingtools, host/tui, each plugin, and compositions for llm, log
// and runtime) declares it once as a Schema (its struct, its rules, its path keys,
// the relations between its keys) and the caller of Load registers it
// through Options.Sections (cmd/dsh passes compositions.ConfigSections). The loader then checks those keys in every
// layer like its own, so the owner decodes its section with Section and
// validates nothing again. configs/default.yaml holds every key's default and
// one-line doc; tests check it against the whole tree. Reference joins the
// two (default, doc, variable, what an untrusted project may do, secret)
// for the README's configuration tables, which cmd/dsh's tests generate
// and check, and a Schema's Explain says what its owner makes of a loaded
// value, which config show prints (Config.Explain).
//
// Invariants: every key in any layer exists in the key tree (dsh's embedded
// defaults and profiles may also carry sections a Load did not register;
// those are skipped) and has the
// key's type; enum and range rules hold per layer and cross-key rules on the
// merged result; each error names the key and the file, variable or flag it
// came from. A loaded Config is complete (default.yaml defines every key),
// its derived paths are absolute, and it is never mutated by this package
// afterwards. Home-scoped files (the profile and $DSH_HOME/config.yaml) cannot
// set home, because they are found through it.
//
// The project file comes from the repository, not the user, so it is not
// trusted: unless its folder is in the trust store ($DSH_HOME/
// trusted-folders.json, written by dsh trust) it may only set the keys of an
// explicit allowlist (each Schema's Safe; no built-in key is safe), plus
// the keys a Schema marks Stricter
// (permissions.mode) when that makes dsh stricter; every other key is ignored and named in one warning
// (Config.Warnings). The trust store is found through the home the other
// layers select, so a project can never vouch for itself.
//
// cmd/dsh calls Load once per process and passes the Config down; plugins see
// only their own sub-tree through Config.Section (host.ConfigSource).
package config
