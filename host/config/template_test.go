package config_test

import (
	"reflect"
	"strings"
	"testing"

	. "github.com/seed-e9b4dba4/dsh/host/config"
)

func TestTheTemplateChangesNothingAndEachOfItsLinesUncommentsToTheDefault(t *testing.T) {
	tmpl := string(Template())
	body, ok := strings.CutPrefix(tmpl, TemplateHeader)
	if !ok {
		t.Fatalf("the template does not start with its header:\n%s", tmpl)
	}
	for _, l := range strings.Split(body, "\n") {
		if l != "" && !strings.HasPrefix(l, "# ") {
			t.Fatalf("line %q is not commented out", l)
		}
	}

	w := newWorld(t)
	w.userFile(tmpl)
	c := w.load(w.opts())
	for _, key := range c.Keys() {
		if o := c.Origin(key); o != "default" && !strings.HasPrefix(o, "profile") {
			t.Errorf("the commented template set %s (origin %s)", key, o)
		}
	}

	// Uncommenting every line gives a user file that sets every key but
	// home to its default.
	var un []string
	for _, l := range strings.Split(body, "\n") {
		un = append(un, strings.TrimPrefix(l, "# "))
	}
	file := w.userFile(strings.Join(un, "\n"))
	u := w.load(w.opts())
	for _, key := range u.Keys() {
		if key == "home" {
			continue
		}
		if strings.HasPrefix(c.Origin(key), "profile") {
			continue // the user file is above the profile
		}
		if !reflect.DeepEqual(u.Value(key), c.Value(key)) {
			t.Errorf("%s uncommented = %v, default %v", key, u.Value(key), c.Value(key))
		}
		if u.Origin(key) != file {
			t.Errorf("%s is not set by the uncommented template (origin %s)", key, u.Origin(key))
		}
	}
}
