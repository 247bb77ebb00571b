package config

// The sections configs/default.yaml carries for dsh's plugins, declared
// here the way their owning packages declare them (plugins/spill,
// plugins/timeout, plugins/sessionquery), so that this package's tests load
// the whole shipped key tree without importing a plugin. The compositions
// tests check the real declarations against configs/default.yaml.
type testSpillSection struct {
	Enabled        bool   `mapstructure:"enabled"`
	MaxInlineBytes int    `mapstructure:"max_inline_bytes"`
	Root           string `mapstructure:"root"`
	KeepDays       int    `mapstructure:"keep_days"`
	KeepTotalBytes int    `mapstructure:"keep_total_bytes"`
}

type testTimeoutSection struct {
	Enabled bool `mapstructure:"enabled"`
}

type testSessionQuerySection struct {
	Enabled          bool `mapstructure:"enabled"`
	MaxSearchResults int  `mapstructure:"max_search_results"`
	SearchTimeoutMs  int  `mapstructure:"search_timeout_ms"`
}

var testSections = []Schema{
	SchemaOf[testSessionQuerySection]("plugins.session_query", map[string]Rule{
		"max_search_results": IntIn(1, MaxSafeInteger),
		"search_timeout_ms":  IntIn(1, MaxTimerMs),
	}),
	SchemaOf[testTimeoutSection]("plugins.timeout", nil),
	SchemaOf[testSpillSection]("plugins.spill", map[string]Rule{
		"max_inline_bytes": IntAtLeast(0),
		"keep_days":        IntAtLeast(1),
		"keep_total_bytes": IntAtLeast(1),
	}, "root"),
}

// testTree is the key tree of a Load with testSections.
var testTree = func() *schema {
	s, err := withSections(testSections)
	if err != nil {
		panic(err)
	}
	return s
}()
