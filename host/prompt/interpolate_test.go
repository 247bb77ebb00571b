package prompt_test

import (
	"testing"

	"github.com/seed-e9b4dba4/dsh/host/prompt"
)

func TestInterpolate(t *testing.T) {
	vars := map[string]string{"cwd": "/w", "model": "deepseek-v4-flash", "tricky": "{{model}}", "v2_x": "ok", "empty": ""}
	tests := []struct {
		name, tmpl, want, wantErr string
	}{
		{name: "no references", tmpl: "plain text", want: "plain text"},
		{name: "substitution", tmpl: "in {{cwd}} with {{model}}", want: "in /w with deepseek-v4-flash"},
		{name: "adjacent groups", tmpl: "{{cwd}}{{cwd}}", want: "/w/w"},
		{name: "digits and underscore", tmpl: "{{v2_x}}", want: "ok"},
		{name: "values are not rescanned", tmpl: "{{tricky}}", want: "{{model}}"},
		{name: "lone open braces are literal", tmpl: "a {{ b", want: "a {{ b"},
		{name: "several lone open braces", tmpl: "{{{{ x {{", want: "{{{{ x {{"},
		{name: "literal after a group", tmpl: "{{cwd}} then {{ nothing", want: "/w then {{ nothing"},
		{name: "closing braces alone are literal", tmpl: "a }} b", want: "a }} b"},
		{name: "extra closing brace stays", tmpl: "{{cwd}}}", want: "/w}"},
		{name: "multi-byte text", tmpl: "→ {{cwd}} — ok", want: "→ /w — ok"},
		{name: "unknown variable", tmpl: "{{nope}}",
			wantErr: `unknown prompt variable "{{nope}}"; known variables: cwd, empty, model, tricky, v2_x`},
		{name: "valueless variable", tmpl: "{{empty}}", wantErr: `prompt variable "{{empty}}" has no value`},
		{name: "empty group", tmpl: "{{}}",
			wantErr: `malformed prompt variable reference "{{}}": variable names match [a-z][a-z0-9_]*`},
		{name: "upper case name", tmpl: "{{Model}}",
			wantErr: `malformed prompt variable reference "{{Model}}": variable names match [a-z][a-z0-9_]*`},
		{name: "spaces in group", tmpl: "{{ cwd }}",
			wantErr: `malformed prompt variable reference "{{ cwd }}": variable names match [a-z][a-z0-9_]*`},
		{name: "leading digit", tmpl: "{{2x}}",
			wantErr: `malformed prompt variable reference "{{2x}}": variable names match [a-z][a-z0-9_]*`},
		{name: "open braces with a later close", tmpl: "{{ {x}} tail",
			wantErr: `malformed prompt variable reference at "{{ {x}} tail": write {{name}} with a name like [a-z][a-z0-9_]*`},
		{name: "triple braces", tmpl: "{{{cwd}}}",
			wantErr: `malformed prompt variable reference at "{{{cwd}}}": write {{name}} with a name like [a-z][a-z0-9_]*`},
		{name: "unclosed group before a later group", tmpl: "{{cwd and {{model}}",
			wantErr: `malformed prompt variable reference at "{{cwd and {{mode…": write {{name}} with a name like [a-z][a-z0-9_]*`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := prompt.Interpolate(tc.tmpl, vars)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("err = %v\nwant %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestInterpolateWithoutVariables(t *testing.T) {
	_, err := prompt.Interpolate("{{cwd}}", nil)
	if err == nil || err.Error() != `unknown prompt variable "{{cwd}}"; known variables: (none)` {
		t.Fatalf("err = %v", err)
	}
}
