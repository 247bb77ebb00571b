package config

//go:generate go test -run TestBuiltinDefaultsAreDefaultYAML -update-defaults .

// builtinSetting is one key of configs/default.yaml as parseYAML decodes
// it: the dotted key and its YAML value (a string, int, float64 or bool).
type builtinSetting struct {
	key   string
	value any
}

// defaultsLayer is the layer of the embedded defaults, read from
// builtinDefaults: configs/default.yaml decoded when dsh is built
// (defaults_gen.go), not parsed again by every process, where the parse
// took about two milliseconds of each command's start. Each value is
// checked as parseYAML checks it; a test keeps the table equal to the
// file.
func (s *schema) defaultsLayer(p provenance) (layer, []error) {
	l := layer{}
	var errs []error
	for _, d := range builtinDefaults {
		if err := s.setLeaf(d.key, d.value, p, l); err != nil {
			errs = append(errs, err)
		}
	}
	return l, errs
}
