package config

import (
	"bytes"
	"strings"

	"github.com/seed-e9b4dba4/dsh/configs"
)

// templateHeader opens the file dsh config init writes.
const templateHeader = `# dsh user configuration. Every key dsh reads is listed below with its default
# value, all commented out, so this file changes nothing yet. To change a
# setting, remove the leading "# " from its line and from the lines of the
# sections above it (e.g. "llm:"), then edit the value; unknown keys are
# errors. dsh config show prints the effective value of every key and where it
# came from. Layers, lowest to highest: the defaults < the profile (--profile)
# < this file < ./.dsh/config.yaml (only harmless keys unless the folder is
# trusted with dsh trust) < --config FILE < DSH_* environment variables
# < flags (--home, --set key=value). Relative paths are resolved against this
# file's directory; "~/" means your home directory.
`

// Template is a commented configuration file for the user's dsh home:
// the built-in defaults with their one-line docs, every line commented out
// with "# " so that removing that prefix restores a valid line. The home
// key is left out: the file lives in the home, which only DSH_HOME and
// --home choose.
func Template() []byte {
	var b bytes.Buffer
	b.WriteString(templateHeader)
	lines := strings.Split(string(configs.Default()), "\n")
	// Skip the defaults' own header: the comment block before the first
	// blank line.
	i := 0
	for i < len(lines) && strings.HasPrefix(lines[i], "#") {
		i++
	}
	var pending []string // comment lines waiting for the key they document
	for _, l := range lines[i:] {
		trimmed := strings.TrimSpace(l)
		switch {
		case trimmed == "":
			flushComments(&b, pending)
			pending = nil
			b.WriteString("\n")
		case strings.HasPrefix(trimmed, "#"):
			pending = append(pending, l)
		case l == trimmed && strings.HasPrefix(l, "home:"):
			pending = nil // the user file cannot set it
		default:
			flushComments(&b, pending)
			pending = nil
			b.WriteString("# " + l + "\n")
		}
	}
	flushComments(&b, pending)
	return collapseBlankLines(b.Bytes())
}

func flushComments(b *bytes.Buffer, comments []string) {
	for _, c := range comments {
		b.WriteString("# " + c + "\n")
	}
}

// collapseBlankLines leaves at most one blank line in a row and none at
// the end but the final newline.
func collapseBlankLines(p []byte) []byte {
	for bytes.Contains(p, []byte("\n\n\n")) {
		p = bytes.ReplaceAll(p, []byte("\n\n\n"), []byte("\n\n"))
	}
	return append(bytes.TrimRight(p, "\n"), '\n')
}

// Profiles lists the profile names --profile accepts with home as the dsh
// home: the embedded ones and home's profiles/NAME.yaml files.
func Profiles(home string) []string { return availableProfiles(home) }
