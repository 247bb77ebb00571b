package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/spf13/viper"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// Options selects the sources Load layers. The zero value loads the defaults,
// the default profile, the user and project files and the process
// environment, relative to the process working directory.
type Options struct {
	// Profile is the --profile name; empty means "default".
	Profile string
	// ConfigFile is the --config file; it must exist when given. It sits just
	// above the project file and below the environment.
	ConfigFile string
	// Home is the --home flag; it beats DSH_HOME.
	Home string
	// Cwd is the working directory (the project); empty means os.Getwd.
	Cwd string
	// Env looks up environment variables; nil means os.LookupEnv.
	Env func(string) (string, bool)
	// Set holds --set key=value flags, applied in order after --home.
	Set []string
	// Sections are the sections other packages own (plugins.spill, ...),
	// added to the built-in key tree. A key of a section nobody registered
	// is unknown, except in dsh's embedded defaults and profiles, which
	// carry every section dsh ships and skip those this Load lacks.
	Sections []Schema
}

// DefaultProfile is the profile used when none is named.
const DefaultProfile = "default"

// Load layers the configuration, lowest to highest precedence: the embedded
// defaults, the profile, $DSH_HOME/config.yaml, <cwd>/.dsh/config.yaml, the
// --config file, DSH_* environment variables, and flags (--home, then each
// --set). Every problem found is reported, each naming its key and source.
func Load(opts Options) (*Config, error) {
	ld, err := newLoader(opts)
	if err != nil {
		return nil, err
	}
	cwd := ld.cwd
	profileName := opts.Profile
	if profileName == "" {
		profileName = DefaultProfile
	}
	defaults, explicit, env, flags, err := ld.outerLayers(opts)
	if err != nil {
		return nil, err
	}
	projectPath := filepath.Join(cwd, ".dsh", "config.yaml")
	project := ld.collect(ld.file(projectPath, projectPath, rankProject, false))

	// Whether the project is trusted is decided by the home the project
	// cannot move, so that it can never vouch for itself.
	trustHome, err := ld.resolveHome(defaults, explicit, env, flags)
	if err != nil {
		return nil, errors.Join(append(ld.errs, err)...)
	}
	trust := OpenTrust(trustHome)
	proj := Project{Dir: cwd}
	var narrowing layer
	if ld.read(rankProject) {
		proj.File = projectPath
		proj.Trusted = sameFile(filepath.Join(trustHome, "config.yaml"), projectPath)
		if !proj.Trusted {
			trusted, err := trust.Trusted(cwd)
			if err != nil {
				return nil, errors.Join(append(ld.errs, err)...)
			}
			proj.Trusted = trusted
		}
		if !proj.Trusted {
			project, narrowing, proj.Ignored = ld.tree.splitUntrusted(project)
		}
	}

	// The profile and the user file live inside home, so only the layers
	// outside it decide where home is.
	home, err := ld.resolveHome(defaults, project, explicit, env, flags)
	if err != nil {
		return nil, errors.Join(append(ld.errs, err)...)
	}
	profile, err := ld.profile(profileName, home)
	if err != nil {
		ld.errs = append(ld.errs, err)
	}
	var user layer
	userPath := filepath.Join(home, "config.yaml")
	if !sameFile(userPath, projectPath) {
		user = ld.collect(ld.file(userPath, userPath, rankUser, false))
	}
	ld.forbidHome(profile, user)
	if len(ld.errs) > 0 {
		return nil, errors.Join(ld.errs...)
	}
	proj.Ignored = append(proj.Ignored, ld.tree.narrow(project, narrowing, []layer{defaults, profile, user})...)
	slices.Sort(proj.Ignored)
	c, err := ld.build(profileName, []layer{defaults, profile, user, project, explicit, env, flags})
	if err != nil {
		return nil, err
	}
	if s, ok := project[modeKey]; ok && c.Origin(modeKey) == s.origin {
		// The project file chose the mode; a session in another folder
		// (ACP's session/new names its own) starts with the mode of the
		// layers below it instead.
		proj.OutsideMode = below(modeKey, defaults, profile, user)
	}
	c.meta.project = proj
	c.meta.trust = trust
	c.meta.userHome, _ = ld.home()
	return c, nil
}

// modeKey is the permission mode's key.
const modeKey = "permissions.mode"

// below is the string value of key that the highest of layers sets ("" if
// none does).
func below(key string, layers ...layer) string {
	v := ""
	for _, l := range layers {
		if s, ok := l[key]; ok {
			v, _ = s.value.(string)
		}
	}
	return v
}

// read reports whether a config file of rank was read.
func (ld *loader) read(rank int) bool {
	return slices.ContainsFunc(ld.files, func(f rankedFile) bool { return f.rank == rank })
}

// TrustFor returns the trust store Load would consult with opts: the one in
// the dsh home selected by every layer but the project file. It reads no
// project file, so a broken one cannot stop the user from trusting or
// revoking a folder.
func TrustFor(opts Options) (TrustStore, error) {
	ld, err := newLoader(opts)
	if err != nil {
		return TrustStore{}, err
	}
	defaults, explicit, env, flags, err := ld.outerLayers(opts)
	if err == nil && len(ld.errs) > 0 {
		err = errors.Join(ld.errs...)
	}
	if err != nil {
		return TrustStore{}, err
	}
	home, err := ld.resolveHome(defaults, explicit, env, flags)
	if err != nil {
		return TrustStore{}, err
	}
	return OpenTrust(home), nil
}

func newLoader(opts Options) (*loader, error) {
	lookup := opts.Env
	if lookup == nil {
		lookup = os.LookupEnv
	}
	cwd, err := workingDir(opts.Cwd)
	if err != nil {
		return nil, err
	}
	tree, err := withSections(opts.Sections)
	if err != nil {
		return nil, err
	}
	return &loader{
		tree: tree,
		cwd:  cwd,
		home: sync.OnceValues(func() (string, error) { return userHome(lookup) }),
		env:  lookup,
	}, nil
}

// outerLayers reads the layers that do not depend on home or on the
// project: the defaults, the --config file, the environment and the flags.
// Problems with their keys are collected in ld.errs; err is a failure that
// stops loading.
func (ld *loader) outerLayers(opts Options) (defaults, explicit, env, flags layer, err error) {
	defaults = ld.collect(ld.tree.defaultsLayer(provenance{
		origin: "default", source: configs.DefaultPath + " (embedded)", baseDir: ld.cwd, rank: rankDefault, builtin: true,
	}))
	if opts.ConfigFile != "" {
		path, err := resolvePath(opts.ConfigFile, ld.cwd, ld.home)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		explicit = ld.collect(ld.file(path, path, rankConfigFile, true))
	}
	env = ld.collect(ld.tree.envLayer(ld.env, ld.cwd))
	flags = ld.collect(ld.tree.flagLayer(opts.Home, opts.Set, ld.cwd))
	return defaults, explicit, env, flags, nil
}

// loader carries one Load call's state.
type loader struct {
	tree  *schema
	cwd   string
	home  func() (string, error) // the user's home directory, looked up once
	env   func(string) (string, bool)
	errs  []error
	files []rankedFile // config files read, in reading order
}

type rankedFile struct {
	rank int
	path string
}

func (ld *loader) collect(l layer, errs []error) layer {
	ld.errs = append(ld.errs, errs...)
	return l
}

func workingDir(cwd string) (string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("cannot determine the working directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("cannot resolve the working directory %s: %w", cwd, err)
	}
	return abs, nil
}

// file reads the YAML file at path; a missing file is an empty layer unless
// required.
func (ld *loader) file(path, origin string, rank int, required bool) (layer, []error) {
	// --config may name a pipe (--config <(...)); every other file is one
	// the user did not name on this command line.
	data, err := readConfigFile(path, rank != rankConfigFile)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, []error{fmt.Errorf("config file %s (from --config) does not exist", path)}
	}
	if err != nil {
		return nil, []error{fmt.Errorf("cannot read config file: %w", err)}
	}
	ld.files = append(ld.files, rankedFile{rank, path})
	return ld.tree.parseYAML(data, provenance{origin: origin, source: path, baseDir: filepath.Dir(path), rank: rank})
}

// resolveHome returns the absolute home directory from the highest layer that
// sets it; empty means ~/.dsh.
func (ld *loader) resolveHome(layers ...layer) (string, error) {
	var win setting
	for _, l := range layers {
		if s, ok := l["home"]; ok {
			win = s
		}
	}
	if win.value == nil || win.value.(string) == "" {
		h, err := ld.home()
		if err != nil {
			return "", err
		}
		return filepath.Join(h, ".dsh"), nil
	}
	return resolvePath(win.value.(string), win.baseDir, ld.home)
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]*$`)

// profile loads the named profile: $DSH_HOME/profiles/<name>.yaml when it
// exists, otherwise the embedded one.
func (ld *loader) profile(name, home string) (layer, error) {
	if !profileName.MatchString(name) {
		return nil, fmt.Errorf("invalid profile name %q: use letters, digits, '.', '_' and '-'", name)
	}
	path := filepath.Join(home, "profiles", name+".yaml")
	data, err := readConfigFile(path, true)
	switch {
	case err == nil:
		ld.files = append(ld.files, rankedFile{rankProfile, path})
		l, errs := ld.tree.parseYAML(data, provenance{
			origin: fmt.Sprintf("profile %s (%s)", name, path), source: path, baseDir: filepath.Dir(path), rank: rankProfile,
		})
		return l, errors.Join(errs...)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("cannot read profile %s: %w", name, err)
	}
	data, ok := configs.Profile(name)
	if !ok {
		return nil, fmt.Errorf("unknown profile %q: available profiles are %s (or create %s)",
			name, strings.Join(availableProfiles(home), ", "), path)
	}
	l, errs := ld.tree.parseYAML(data, provenance{
		origin: fmt.Sprintf("profile %s (embedded)", name), source: configs.ProfilePath(name) + " (embedded)", baseDir: ld.cwd, rank: rankProfile, builtin: true,
	})
	return l, errors.Join(errs...)
}

func availableProfiles(home string) []string {
	names := configs.Profiles()
	matches, _ := filepath.Glob(filepath.Join(home, "profiles", "*.yaml"))
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".yaml")
		if profileName.MatchString(name) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// forbidHome rejects home in layers that are found through home.
func (ld *loader) forbidHome(layers ...layer) {
	for _, l := range layers {
		if s, ok := l["home"]; ok {
			ld.errs = append(ld.errs, &Error{Key: "home", Source: s.source,
				Problem: "cannot be set in a profile or in the home config file, which are found through it; set DSH_HOME, --home or the project file instead"})
		}
	}
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// build merges the layers with viper, decodes the result strictly into a
// Config and resolves paths.
func (ld *loader) build(profile string, layers []layer) (*Config, error) {
	v := viper.New()
	winners := map[string]setting{}
	for _, l := range layers {
		if err := v.MergeConfigMap(l.nest()); err != nil {
			return nil, fmt.Errorf("merge config: %w", err)
		}
		for k, s := range l {
			winners[k] = s
		}
	}
	c := &Config{tree: ld.tree}
	all := v.AllSettings()
	// Every key was checked against the key tree, so a decoding error means
	// configs/default.yaml and a section's struct disagree.
	if len(ld.tree.owned) > 0 {
		c.owned = map[string]reflect.Value{}
	}
	for path, t := range ld.tree.owned {
		sec := reflect.New(t)
		if err := decodeStrict(cutPath(all, path), sec.Interface()); err != nil {
			return nil, fmt.Errorf("built-in config does not match config section %q: %w", path, err)
		}
		c.owned[path] = sec
	}
	if err := decodeStrict(all, c); err != nil {
		return nil, fmt.Errorf("built-in config does not match the key tree: %w", err)
	}
	c.mcpServers = mcpServersFrom(winners)
	if err := ld.resolvePaths(c, winners); err != nil {
		return nil, err
	}
	if err := checkPairs(ld.tree.pairs, winners); err != nil {
		return nil, err
	}
	origins := make(map[string]string, len(winners))
	for k, s := range winners {
		origins[k] = s.origin
	}
	sort.SliceStable(ld.files, func(i, j int) bool { return ld.files[i].rank < ld.files[j].rank })
	files := make([]string, len(ld.files))
	for i, f := range ld.files {
		files[i] = f.path
	}
	c.meta = &meta{profile: profile, origins: origins, files: files}
	return c, nil
}

func (ld *loader) resolvePaths(c *Config, winners map[string]setting) error {
	for _, key := range ld.tree.paths {
		f, _ := ld.tree.field(c, key)
		p := f.String()
		if slices.Contains(ld.tree.literals[key], p) {
			continue
		}
		abs, err := resolvePath(p, winners[key].baseDir, ld.home)
		if err != nil {
			return fmt.Errorf("config key %q: %w", key, err)
		}
		f.SetString(abs)
	}
	if c.Home == "" {
		h, err := ld.home()
		if err != nil {
			return err
		}
		c.Home = filepath.Join(h, ".dsh")
	}
	for key, file := range ld.tree.inHome {
		if f, _ := ld.tree.field(c, key); f.String() == "" {
			f.SetString(filepath.Join(c.Home, file))
		}
	}
	return nil
}

// checkPairs checks relations between keys on the effective values, blaming
// the key set by the higher layer (the more recent change).
func checkPairs(pairs []Pair, winners map[string]setting) error {
	var errs []error
	for _, p := range pairs {
		lo, hi := winners[p.Low], winners[p.High]
		if p.holds(lo.value, hi.value) {
			continue
		}
		var e *Error
		if hi.rank > lo.rank {
			rel := "at least"
			if p.Strict {
				rel = "greater than"
			}
			e = &Error{Key: p.High, Source: hi.source,
				Problem: fmt.Sprintf("must be %s %s (%v, from %s)", rel, p.Low, lo.value, lo.origin)}
		} else {
			rel := "at most"
			if p.Strict {
				rel = "less than"
			}
			e = &Error{Key: p.Low, Source: lo.source,
				Problem: fmt.Sprintf("must be %s %s (%v, from %s)", rel, p.High, hi.value, hi.origin)}
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// cutPath removes the sub-tree at the dotted path from tree and returns it
// (nil when absent), dropping parents the removal leaves empty.
func cutPath(tree map[string]any, path string) any {
	head, rest, nested := strings.Cut(path, ".")
	if !nested {
		v := tree[head]
		delete(tree, head)
		return v
	}
	sub, ok := tree[head].(map[string]any)
	if !ok {
		return nil
	}
	v := cutPath(sub, rest)
	if len(sub) == 0 {
		delete(tree, head)
	}
	return v
}
