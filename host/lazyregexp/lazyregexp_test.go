package lazyregexp

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestMethodsAnswerAsTheCompiledPattern(t *testing.T) {
	const expr = `(\w+)=(\d+)`
	const s = "a=1 b=22 c=x d=333"
	lazy, re := New(expr), regexp.MustCompile(expr)
	if lazy.MatchString(s) != re.MatchString(s) || lazy.MatchString("none") {
		t.Error("MatchString differs")
	}
	if !slices.Equal(lazy.FindStringIndex(s), re.FindStringIndex(s)) {
		t.Error("FindStringIndex differs")
	}
	if !slices.Equal(lazy.FindStringSubmatch(s), re.FindStringSubmatch(s)) {
		t.Error("FindStringSubmatch differs")
	}
	if got, want := lazy.FindSubmatch([]byte(s)), re.FindSubmatch([]byte(s)); !slices.EqualFunc(got, want, slices.Equal) {
		t.Error("FindSubmatch differs")
	}
	if !slices.Equal(lazy.FindAllString(s, -1), re.FindAllString(s, -1)) {
		t.Error("FindAllString differs")
	}
	if !slices.EqualFunc(lazy.FindAllStringSubmatch(s, 2), re.FindAllStringSubmatch(s, 2), slices.Equal) {
		t.Error("FindAllStringSubmatch differs")
	}
	if !slices.EqualFunc(lazy.FindAllStringSubmatchIndex(s, -1), re.FindAllStringSubmatchIndex(s, -1), slices.Equal) {
		t.Error("FindAllStringSubmatchIndex differs")
	}
	if got, want := lazy.ReplaceAllStringFunc(s, strings.ToUpper), re.ReplaceAllStringFunc(s, strings.ToUpper); got != want {
		t.Errorf("ReplaceAllStringFunc = %q, want %q", got, want)
	}
}

func TestOutsideTestsThePatternIsCompiledOnFirstUse(t *testing.T) {
	// A malformed pattern shows when compiling happens: not in newRegexp,
	// but in the first method call.
	r := newRegexp(`(unclosed`, false)
	defer func() {
		if recover() == nil {
			t.Error("matching a malformed lazy pattern did not panic")
		}
	}()
	r.MatchString("x")
}

func TestInTestsThePatternIsCompiledAtOnce(t *testing.T) {
	if !inTest {
		t.Fatal("a test binary is not recognised as one")
	}
	defer func() {
		if recover() == nil {
			t.Error("New of a malformed pattern in a test binary did not panic")
		}
	}()
	New(`(unclosed`)
}
