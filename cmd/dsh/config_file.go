package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// userConfigPath is $DSH_HOME/config.yaml as the global flags select it.
// It does not need a loadable configuration: a broken user file is exactly
// the one a user wants to find and fix.
func (g *globals) userConfigPath() (string, error) {
	if cfg, err := config.Load(g.configOptions()); err == nil {
		return filepath.Join(cfg.Home, "config.yaml"), nil
	}
	ts, err := config.TrustFor(g.configOptions())
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(ts.Path()), "config.yaml"), nil
}

func newConfigPathCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "path",
		Short: "Print the path of your config file ($DSH_HOME/config.yaml)",
		Long: `Print the path of your user config file, $DSH_HOME/config.yaml (by default
~/.dsh/config.yaml), whether or not it exists, e.g. to edit it:
$EDITOR "$(dsh config path)". dsh config init creates it.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			path, err := g.userConfigPath()
			if err != nil {
				return err
			}
			fmt.Fprintln(g.stdout, path)
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				fmt.Fprintln(g.stderr, "dsh: it does not exist yet; dsh config init creates it")
			}
			return nil
		},
	}
}

func newConfigInitCmd(g *globals) *cobra.Command {
	var print bool
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create your config file with every key commented out",
		Long: `Create $DSH_HOME/config.yaml (see dsh config path) holding every config key
with its default value and a one-line description, all commented out, so
the new file changes nothing until you uncomment a line. An existing file
is never overwritten. --print writes the template to stdout instead.`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			tmpl := config.Template()
			if print {
				_, err := g.stdout.Write(tmpl)
				return err
			}
			path, err := g.userConfigPath()
			if err != nil {
				return err
			}
			if err := writeNewFile(path, tmpl); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("%s already exists and was left as it is; edit it, or move it away and run dsh config init again", path)
				}
				return err
			}
			fmt.Fprintf(g.stdout, "Created %s: every key is commented out; uncomment a line to change a setting.\n", path)
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the template on stdout and create no file")
	return cmd
}

// writeNewFile creates path (and its directory) with content, readable by
// the user only since it may come to hold a key; it fails with
// fs.ErrExist rather than touch an existing file.
func writeNewFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}
