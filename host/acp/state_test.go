package acp

import (
	"slices"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

// optionValues renders config options as id=value.
func optionValues(opts []sdk.SessionConfigOption) []string {
	var out []string
	for _, o := range opts {
		out = append(out, string(o.Select.Id)+"="+string(o.Select.CurrentValue))
	}
	return out
}

// Mode, model and effort chosen in the editor come back when the session
// is loaded or resumed after it was closed (here: reopened from its log).
func TestModeModelAndEffortSurviveCloseThenLoadOrResume(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	cwd := workspace(t)
	id := h.newSession(cwd)
	if _, err := h.conn.SetSessionMode(h.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "accept-edits"}); err != nil {
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{optionModel, "fake-large"}, {optionEffort, "low"}} {
		if _, err := h.conn.SetSessionConfigOption(h.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: id, ConfigId: sdk.SessionConfigId(kv[0]), Value: sdk.SessionConfigValueId(kv[1]),
		}}); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"mode=accept-edits", "model=fake-large", "reasoning_effort=low"}
	for _, reopen := range []string{"load", "resume"} {
		if _, err := h.conn.CloseSession(h.ctx, sdk.CloseSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
		if w.agent(string(id)) != nil {
			t.Fatal("the session is still open")
		}
		var modes *sdk.SessionModeState
		var opts []sdk.SessionConfigOption
		if reopen == "load" {
			resp, err := h.conn.LoadSession(h.ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: cwd, McpServers: []sdk.McpServer{}})
			if err != nil {
				t.Fatal(err)
			}
			modes, opts = resp.Modes, resp.ConfigOptions
		} else {
			resp, err := h.conn.ResumeSession(h.ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: cwd})
			if err != nil {
				t.Fatal(err)
			}
			modes, opts = resp.Modes, resp.ConfigOptions
		}
		if modes == nil || modes.CurrentModeId != "accept-edits" {
			t.Errorf("%s: modes = %+v", reopen, modes)
		}
		if got := optionValues(opts); !slices.Equal(got, want) {
			t.Errorf("%s: options = %v, want %v", reopen, got, want)
		}
		if m, e := w.agent(string(id)).Model(); m != "fake-large" || e != "low" {
			t.Errorf("%s: agent model = %s %s", reopen, m, e)
		}
	}
}
