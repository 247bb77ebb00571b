package codingtools

import "github.com/seed-e9b4dba4/dsh/host/prompt"

// Guidance texts, one system-prompt section per tool that needs one.
// todo_write's description says all it needs, so it has no section.
const (
	PromptRead = "Use read, not cat, head or tail in bash, to look at files. Every line it returns starts with its line number and a colon; that prefix is not part of the file. For a large file, read a window with offset and limit and follow the trailer to continue."

	PromptWrite = "Use write to create a file or to replace a whole file. It refuses to overwrite a file you have not read in this session, so read it first; for a change to part of a file, use edit instead."

	PromptEdit = "Use edit for targeted changes. It replaces old_string with new_string literally, and old_string must occur exactly once unless you set replace_all. Copy old_string exactly from the read output, without the line-number prefix, with enough surrounding lines to make it unique. Read a file before its first edit in this session, and read it again if it changed on disk."

	PromptGlob = "Use glob, not find or ls in bash, to find files by name; use ** to search subdirectories (for example **/*_test.go). Results skip files ignored by .gitignore and list the most recently modified first."

	PromptGrep = "Use grep, not grep or rg in bash, to search file contents. Start with the default files output to see where a pattern occurs, then use output_mode content, with a glob or path to narrow it, to see the lines."

	PromptBash = "Use bash to build, test, run programs and use git. Each call is a new non-interactive shell in the working directory: chain dependent steps with &&, and avoid commands that wait for input. Check the [exit code: N] marker on every result and investigate failures before moving on. When output is truncated its end is kept and the output is saved to the named file (up to a size limit; the result says when it was reached); read or grep that file instead of running the command again."
)

// PromptSections returns the sections in prompt order (orders 100-105).
func PromptSections() []prompt.Section {
	return []prompt.Section{
		{Name: "tool:read", Order: 100, Text: PromptRead},
		{Name: "tool:write", Order: 101, Text: PromptWrite},
		{Name: "tool:edit", Order: 102, Text: PromptEdit},
		{Name: "tool:glob", Order: 103, Text: PromptGlob},
		{Name: "tool:grep", Order: 104, Text: PromptGrep},
		{Name: "tool:bash", Order: 105, Text: PromptBash},
	}
}
