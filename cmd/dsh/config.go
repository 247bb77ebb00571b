package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Inspect the effective configuration",
	}
	requireSubcommand(cmd)
	cmd.AddCommand(newConfigShowCmd(g), newConfigPathCmd(g), newConfigInitCmd(g))
	return cmd
}

func newConfigShowCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show [KEY|SECTION]",
		Short: "Print every config key with its effective value and where it came from",
		Long: `Print every config key with its effective value and its origin: default,
the profile, a config file, an environment variable (env DSH_...) or a flag.
Secrets such as llm.api_key are masked. Long values are shortened in the
table; --json prints them in full. Below the table: whether this folder's
.dsh/config.yaml is trusted (and which of its keys were ignored if not), and
the trusted folders (see dsh trust).

With a KEY (dsh config show llm.model), print only its value, as it is (a
string without quotes, anything else as JSON), for scripts; with --json, the
object {key, value, origin}. With a SECTION (dsh config show llm), print the
table of its keys.`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, k := range g.configKeys() {
				if strings.HasPrefix(k, toComplete) {
					out = append(out, k)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig()
			if err != nil {
				return err
			}
			if len(args) == 1 {
				return showConfigKey(g, cmd, cfg, args[0], asJSON)
			}
			folders, err := cfg.Trust().Folders()
			if err != nil {
				return err
			}
			if asJSON {
				return writeConfigJSON(g.stdout, cfg, folders)
			}
			if err := writeConfigTable(g.stdout, cfg, cfg.Keys()); err != nil {
				return err
			}
			writeTrust(g.stdout, cfg, folders)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false,
		"print JSON: {profile, files, settings: [{key, value, origin}], project: {file, dir, trusted, ignored}, trust_file, trusted_folders}")
	return cmd
}

// secretMask replaces a secret that is set; an unset one shows as "".
const secretMask = "********"

// shownValue is key's value as config show may reveal it: the value its
// owner uses (config.Config.Explain), a set secret masked.
func shownValue(cfg *config.Config, key string) any {
	v, _ := cfg.Explain(key)
	if s, ok := v.(string); ok && s != "" && cfg.IsSecret(key) {
		return secretMask
	}
	return v
}

// shownOrigin is key's origin, with its owner's note on what it makes of
// the value.
func shownOrigin(cfg *config.Config, key string) string {
	if _, note := cfg.Explain(key); note != "" {
		return fmt.Sprintf("%s (%s)", cfg.Origin(key), note)
	}
	return cfg.Origin(key)
}

// configKeys is every key and section name, for completion.
func (g *globals) configKeys() []string {
	cfg, err := config.Load(g.configOptions())
	if err != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for _, k := range cfg.Keys() {
		for i := range k {
			if k[i] == '.' && !seen[k[:i]] {
				seen[k[:i]] = true
				out = append(out, k[:i])
			}
		}
		out = append(out, k)
	}
	return out
}

// showConfigKey prints one key's value, or the table of one section.
func showConfigKey(g *globals, cmd *cobra.Command, cfg *config.Config, name string, asJSON bool) error {
	var keys []string
	for _, k := range cfg.Keys() {
		if k == name {
			s := shownSetting{Key: k, Value: shownValue(cfg, k), Origin: shownOrigin(cfg, k)}
			if asJSON {
				return writeJSON(g.stdout, s)
			}
			if str, ok := s.Value.(string); ok {
				fmt.Fprintln(g.stdout, str)
				return nil
			}
			return writeJSONLine(g.stdout, s.Value, false)
		}
		if strings.HasPrefix(k, name+".") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		msg := fmt.Sprintf("unknown config key %q", name)
		if s, d := closest(name, cfg.Keys()); d <= 3 {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		return usageError{err: errors.New(msg + "; dsh config show lists every key"), cmdPath: cmd.CommandPath()}
	}
	if asJSON {
		out := []shownSetting{}
		for _, k := range keys {
			out = append(out, shownSetting{Key: k, Value: shownValue(cfg, k), Origin: shownOrigin(cfg, k)})
		}
		return writeJSON(g.stdout, out)
	}
	return writeConfigTable(g.stdout, cfg, keys)
}

// maxPreview bounds the shown part of a multi-line value, in runes.
const maxPreview = 40

// tableValue renders v on one line: strings quoted so empty values and
// control characters are visible. A multi-line value (the persona) shows the
// start of its first line and its size; --json has it in full.
func tableValue(v any) string {
	switch x := v.(type) {
	case string:
		first, _, multiline := strings.Cut(x, "\n")
		if !multiline {
			return strconv.Quote(x)
		}
		if r := []rune(first); len(r) > maxPreview {
			first = string(r[:maxPreview])
		}
		return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(first), len(x))
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	default:
		return fmt.Sprint(x)
	}
}

func writeConfigTable(w io.Writer, cfg *config.Config, keys []string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tVALUE\tORIGIN")
	for _, key := range keys {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", key, tableValue(shownValue(cfg, key)), shownOrigin(cfg, key))
	}
	return tw.Flush()
}

// writeTrust prints, below the table, how the project file was treated and
// which folders are trusted.
func writeTrust(w io.Writer, cfg *config.Config, folders []string) {
	fmt.Fprintln(w)
	p := cfg.Project()
	switch {
	case p.File == "":
		fmt.Fprintf(w, "project config: none (%s)\n", filepath.Join(p.Dir, ".dsh", "config.yaml"))
	case p.Trusted:
		fmt.Fprintf(w, "project config: %s (trusted folder: every key applies)\n", p.File)
	case len(p.Ignored) > 0:
		fmt.Fprintf(w, "project config: %s (folder not trusted; ignored: %s; trust it with dsh trust)\n", p.File, strings.Join(p.Ignored, ", "))
	default:
		fmt.Fprintf(w, "project config: %s (folder not trusted; every key it sets is one an untrusted folder may set)\n", p.File)
	}
	if len(folders) == 0 {
		fmt.Fprintf(w, "trusted folders: none (%s)\n", cfg.Trust().Path())
		return
	}
	fmt.Fprintf(w, "trusted folders (%s):\n", cfg.Trust().Path())
	for _, f := range folders {
		fmt.Fprintf(w, "  %s\n", f)
	}
}

type shownConfig struct {
	Profile        string         `json:"profile"`
	Files          []string       `json:"files"`
	Settings       []shownSetting `json:"settings"`
	Project        shownProject   `json:"project"`
	TrustFile      string         `json:"trust_file"`
	TrustedFolders []string       `json:"trusted_folders"`
}

type shownProject struct {
	File    string   `json:"file"`
	Dir     string   `json:"dir"`
	Trusted bool     `json:"trusted"`
	Ignored []string `json:"ignored"`
}

type shownSetting struct {
	Key    string `json:"key"`
	Value  any    `json:"value"`
	Origin string `json:"origin"`
}

func writeConfigJSON(w io.Writer, cfg *config.Config, folders []string) error {
	p := cfg.Project()
	out := shownConfig{
		Profile: cfg.Profile(), Files: cfg.Files(), Settings: []shownSetting{},
		Project:   shownProject{File: p.File, Dir: p.Dir, Trusted: p.Trusted, Ignored: p.Ignored},
		TrustFile: cfg.Trust().Path(), TrustedFolders: folders,
	}
	if out.Files == nil {
		out.Files = []string{}
	}
	if out.Project.Ignored == nil {
		out.Project.Ignored = []string{}
	}
	if out.TrustedFolders == nil {
		out.TrustedFolders = []string{}
	}
	for _, key := range cfg.Keys() {
		out.Settings = append(out.Settings, shownSetting{Key: key, Value: shownValue(cfg, key), Origin: shownOrigin(cfg, key)})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
