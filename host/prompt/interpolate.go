package prompt

import (
	"fmt"
	"sort"
	"strings"
)

// Interpolate replaces every {{name}} in tmpl with vars[name]. It is strict:
// a malformed group (an invalid name, "{{}}", braces inside the group, or a
// "{{" that opens no group while a "}}" follows), an unknown name, or a
// variable whose value is empty is an error. A "{{" with no "}}" anywhere
// after it is literal prose. Substituted values are not scanned again, and
// there is no escape syntax.
func Interpolate(tmpl string, vars map[string]string) (string, error) {
	var out strings.Builder
	last := 0
	for {
		rel := strings.Index(tmpl[last:], "{{")
		if rel < 0 {
			break
		}
		open := last + rel
		name, end, ok := groupAt(tmpl, open)
		if !ok {
			if strings.Contains(tmpl[open+2:], "}}") {
				return "", fmt.Errorf("malformed prompt variable reference at %q: write {{name}} with a name like %s", excerpt(tmpl[open:]), namePattern)
			}
			out.WriteString(tmpl[last : open+2])
			last = open + 2
			continue
		}
		if !validName(name) {
			return "", fmt.Errorf("malformed prompt variable reference %q: variable names match %s", "{{"+name+"}}", namePattern)
		}
		value, known := vars[name]
		if !known {
			return "", fmt.Errorf("unknown prompt variable %q; known variables: %s", "{{"+name+"}}", knownNames(vars))
		}
		if value == "" {
			return "", fmt.Errorf("prompt variable %q has no value", "{{"+name+"}}")
		}
		out.WriteString(tmpl[last:open])
		out.WriteString(value)
		last = end
	}
	out.WriteString(tmpl[last:])
	return out.String(), nil
}

const namePattern = "[a-z][a-z0-9_]*"

// groupAt matches a complete {{...}} group without braces inside at open and
// returns its name and the index just past it.
func groupAt(s string, open int) (name string, end int, ok bool) {
	body := s[open+2:]
	for i := 0; i < len(body); i++ {
		switch body[i] {
		case '{':
			return "", 0, false
		case '}':
			if i+1 < len(body) && body[i+1] == '}' {
				return body[:i], open + 2 + i + 2, true
			}
			return "", 0, false
		}
	}
	return "", 0, false
}

func validName(name string) bool {
	if name == "" || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

func excerpt(s string) string {
	const max = 16
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

func knownNames(vars map[string]string) string {
	if len(vars) == 0 {
		return "(none)"
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
