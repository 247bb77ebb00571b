package sessionquery

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// acceptanceItems is the number of acceptance behaviours in
// shared/spec/session-query.md §7.
const acceptanceItems = 185

// TestAcceptanceMapNamesRealTests checks testdata/acceptance.txt, the map from
// each design acceptance behaviour to the Go tests that pin it: every
// behaviour is listed once, in order, and every test it names exists, so a
// renamed or deleted test cannot leave the map claiming coverage.
func TestAcceptanceMapNamesRealTests(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "acceptance.txt"))
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join("..", "..")
	defined := map[string]map[string]bool{} // dir -> test names
	testsIn := func(dir string) map[string]bool {
		if names, ok := defined[dir]; ok {
			return names
		}
		names := map[string]bool{}
		files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*_test.go"))
		if err != nil || len(files) == 0 {
			t.Errorf("no test files in %s", dir)
		}
		decl := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range decl.FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
		}
		defined[dir] = names
		return names
	}
	next, pinned := 1, 0
	var unpinned []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		num, rest, _ := strings.Cut(line, " ")
		n, err := strconv.Atoi(num)
		if err != nil || n != next {
			t.Fatalf("line %q: want behaviour %d next", line, next)
		}
		next++
		fields := strings.Fields(rest)
		switch {
		case len(fields) == 0:
			t.Errorf("behaviour %d names no test and gives no reason", n)
		case fields[0] == "-":
			if len(fields) < 4 {
				t.Errorf("behaviour %d: say why no test pins it", n)
			}
			unpinned = append(unpinned, num)
		default:
			for _, ref := range fields {
				dir, name, ok := strings.Cut(ref, ".")
				if !ok || !testsIn(dir)[name] {
					t.Errorf("behaviour %d names %s, which is not a test (want DIR.TestName)", n, ref)
				}
			}
			pinned++
		}
	}
	if next-1 != acceptanceItems {
		t.Errorf("the map lists %d behaviours, want %d", next-1, acceptanceItems)
	}
	t.Logf("%d of %d behaviours have a Go test; not pinned: %s", pinned, acceptanceItems, strings.Join(unpinned, ", "))
}
