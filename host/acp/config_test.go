package acp

import (
	"slices"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/permissions"
)

func setOption(h *harness, id sdk.SessionId, option, value string) (sdk.SetSessionConfigOptionResponse, error) {
	return h.conn.SetSessionConfigOption(h.ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
		SessionId: id, ConfigId: sdk.SessionConfigId(option), Value: sdk.SessionConfigValueId(value),
	}})
}

func current(opts []sdk.SessionConfigOption) []string {
	var out []string
	for _, o := range opts {
		out = append(out, string(o.Select.Id)+"="+string(o.Select.CurrentValue))
	}
	return out
}

func TestSetConfigOptionAppliesAndAnswersTheFullList(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	other := h.newSession(workspace(t))

	resp, err := setOption(h, id, "mode", "accept-edits")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := current(resp.ConfigOptions), []string{"mode=accept-edits", "model=fake-small"}; !slices.Equal(got, want) {
		t.Errorf("options = %v, want %v", got, want)
	}
	if m := w.perms.Mode(string(id)); m != permissions.ModeAcceptEdits {
		t.Errorf("mode = %s", m)
	}
	if m := w.perms.Mode(string(other)); m != permissions.ModeDefault {
		t.Errorf("another session's mode changed to %s", m)
	}
	if got := kinds(h.c.take()); !slices.Equal(got, []string{"current_mode_update:accept-edits"}) {
		t.Errorf("updates = %v", got)
	}

	resp, err = setOption(h, id, "model", "fake-large")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := current(resp.ConfigOptions), []string{"mode=accept-edits", "model=fake-large", "reasoning_effort=high"}; !slices.Equal(got, want) {
		t.Errorf("options = %v, want %v", got, want)
	}
	resp, err = setOption(h, id, "reasoning_effort", "low")
	if err != nil {
		t.Fatal(err)
	}
	if model, effort := w.agent(string(id)).Model(); model != "fake-large" || effort != "low" {
		t.Errorf("agent model = %s/%s", model, effort)
	}
	if got := current(resp.ConfigOptions); got[2] != "reasoning_effort=low" {
		t.Errorf("options = %v", got)
	}

	for _, bad := range [][2]string{{"mode", "yolo"}, {"model", "gpt-9"}, {"reasoning_effort", "max"}, {"colour", "blue"}} {
		if _, err := setOption(h, id, bad[0], bad[1]); err == nil {
			t.Errorf("%s=%s accepted", bad[0], bad[1])
		} else if re, ok := err.(*sdk.RequestError); !ok || re.Code != -32602 {
			t.Errorf("%s=%s: %v", bad[0], bad[1], err)
		}
	}
}

func TestSetModeSwitchesPermissionsAndUpdatesOptions(t *testing.T) {
	w := newWorld(t)
	h := start(t, w)
	id := h.newSession(workspace(t))
	if _, err := h.conn.SetSessionMode(h.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "read-only"}); err != nil {
		t.Fatal(err)
	}
	if m := w.perms.Mode(string(id)); m != permissions.ModeReadOnly {
		t.Errorf("mode = %s", m)
	}
	ns := h.c.take()
	if len(ns) != 1 || ns[0].Update.ConfigOptionUpdate == nil || current(ns[0].Update.ConfigOptionUpdate.ConfigOptions)[0] != "mode=read-only" {
		t.Errorf("updates = %v", kinds(ns))
	}
	if _, err := h.conn.SetSessionMode(h.ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: "yolo"}); err == nil {
		t.Error("unknown mode accepted")
	}
}
