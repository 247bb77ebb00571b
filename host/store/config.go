package store

import (
	"reflect"

	"github.com/seed-e9b4dba4/dsh/host/config"
)

// SectionPath is the sessions config section: where the store keeps the
// session logs. It is declared here once, beside New, which takes its dir.
const SectionPath = "sessions"

// Config is the sessions section.
type Config struct {
	// Dir is the sessions directory, New's root; the loader makes it
	// absolute, and empty means sessions in dsh's home.
	Dir string `mapstructure:"dir"`
}

// ConfigSchema declares the sessions section. dir is a path like every
// config path, and no untrusted project may set it: it moves dsh's data.
var ConfigSchema = config.Schema{
	Path:   SectionPath,
	Type:   reflect.TypeFor[Config](),
	Paths:  []string{"dir"},
	InHome: map[string]string{"dir": "sessions"},
}

// Dir returns the sessions directory of cfg, which must have been loaded
// with ConfigSchema registered.
func Dir(cfg *config.Config) (string, error) {
	c, err := config.Get[Config](cfg, ConfigSchema)
	return c.Dir, err
}
