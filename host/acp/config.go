package acp

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/seed-e9b4dba4/dsh/host/llm"
	"github.com/seed-e9b4dba4/dsh/host/permissions"
)

// Config option ids. Zed shows options by category; once an agent sends
// configOptions it hides the older modes selector, so the permission mode
// is an option too (and modes are still sent for older clients).
const (
	optionMode   = "mode"
	optionModel  = "model"
	optionEffort = "reasoning_effort"
)

// modeState is the session's permission mode as ACP modes.
func (s *server) modeState(ss *sess) *sdk.SessionModeState {
	modes := permissions.Modes()
	out := &sdk.SessionModeState{
		CurrentModeId:  sdk.SessionModeId(s.b.Permissions.Mode(ss.id)),
		AvailableModes: make([]sdk.SessionMode, len(modes)),
	}
	for i, m := range modes {
		out.AvailableModes[i] = sdk.SessionMode{Id: sdk.SessionModeId(m), Name: m.Title(), Description: sdk.Ptr(m.Description())}
	}
	return out
}

// configOptions is the full option list of a session: permission mode,
// model and, when the model offers a choice, reasoning effort.
func (s *server) configOptions(ss *sess) []sdk.SessionConfigOption {
	modes := permissions.Modes()
	modeValues := make(sdk.SessionConfigSelectOptionsUngrouped, len(modes))
	for i, m := range modes {
		modeValues[i] = sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m), Name: m.Title(), Description: sdk.Ptr(m.Description())}
	}
	opts := []sdk.SessionConfigOption{selectOption(optionMode, "Mode", "Which tool calls run without asking.",
		sdk.SessionConfigOptionCategoryMode, string(s.b.Permissions.Mode(ss.id)), modeValues)}

	model, effort := ss.agent.Model()
	models := s.catalog(model)
	modelValues := make(sdk.SessionConfigSelectOptionsUngrouped, len(models))
	for i, m := range models {
		v := sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(m.ID), Name: cmp.Or(m.Name, m.ID)}
		if m.ContextWindow > 0 {
			v.Description = sdk.Ptr(fmt.Sprintf("%dk-token context window", m.ContextWindow/1000))
		}
		modelValues[i] = v
	}
	opts = append(opts, selectOption(optionModel, "Model", "The model that answers from the next request on.",
		sdk.SessionConfigOptionCategoryModel, model, modelValues))

	if info := s.modelInfo(model); len(info.Efforts) > 1 {
		current := cmp.Or(effort, info.DefaultEffort, info.Efforts[0])
		values := make(sdk.SessionConfigSelectOptionsUngrouped, len(info.Efforts))
		for i, e := range info.Efforts {
			values[i] = sdk.SessionConfigSelectOption{Value: sdk.SessionConfigValueId(e), Name: e}
		}
		opts = append(opts, selectOption(optionEffort, "Reasoning effort", "How much the model thinks before it answers.",
			sdk.SessionConfigOptionCategoryThoughtLevel, current, values))
	}
	return opts
}

func selectOption(id, name, description string, category sdk.SessionConfigOptionCategory, current string, values sdk.SessionConfigSelectOptionsUngrouped) sdk.SessionConfigOption {
	o := sdk.NewSessionConfigOptionSelect(sdk.SessionConfigValueId(current), sdk.SessionConfigSelectOptions{Ungrouped: &values})
	o.Select.Id = sdk.SessionConfigId(id)
	o.Select.Name = name
	o.Select.Description = sdk.Ptr(description)
	o.Select.Category = sdk.Ptr(category)
	return o
}

// catalog is the configured models, with the session's current model
// first when the catalog does not list it.
func (s *server) catalog(current string) []llm.ModelInfo {
	models := slices.Clone(s.b.Models)
	if !slices.ContainsFunc(models, func(m llm.ModelInfo) bool { return m.ID == current }) {
		models = append([]llm.ModelInfo{{ID: current, Name: current}}, models...)
	}
	return models
}

func (s *server) modelInfo(id string) llm.ModelInfo {
	for _, m := range s.b.Models {
		if m.ID == id {
			return m
		}
	}
	return llm.ModelInfo{ID: id}
}

// SetSessionMode switches the session's permission mode.
func (s *server) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	defer done()
	ss, err := s.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := s.setMode(ss, string(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	// Clients that show configOptions learn the change from the option list.
	ss.out.Push(sdk.SessionUpdate{ConfigOptionUpdate: &sdk.SessionConfigOptionUpdate{ConfigOptions: s.configOptions(ss)}})
	ss.flush()
	return sdk.SetSessionModeResponse{}, nil
}

// SetSessionConfigOption applies one option and answers the full list,
// which Zed adopts as the session's new state.
func (s *server) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	done, err := s.enter()
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	defer done()
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("config options take a value id; dsh has no boolean options")
	}
	ss, err := s.session(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	value := string(v.Value)
	switch string(v.ConfigId) {
	case optionMode:
		if err := s.setMode(ss, value); err != nil {
			return sdk.SetSessionConfigOptionResponse{}, err
		}
		ss.out.Push(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(value)}})
		ss.flush()
	case optionModel:
		model, effort := ss.agent.Model()
		if !slices.ContainsFunc(s.catalog(model), func(m llm.ModelInfo) bool { return m.ID == value }) {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown model %q", value)
		}
		if info := s.modelInfo(value); effort != "" && !slices.Contains(info.Efforts, effort) {
			effort = "" // the new model's default
		}
		ss.agent.SetModel(value, effort)
	case optionEffort:
		model, _ := ss.agent.Model()
		if !slices.Contains(s.modelInfo(model).Efforts, value) {
			return sdk.SetSessionConfigOptionResponse{}, invalidParams("model %s has no reasoning effort %q", model, value)
		}
		ss.agent.SetModel(model, value)
	default:
		return sdk.SetSessionConfigOptionResponse{}, invalidParams("unknown config option %q", v.ConfigId)
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: s.configOptions(ss)}, nil
}

func (s *server) setMode(ss *sess, mode string) error {
	m, err := permissions.ParseMode(mode)
	if err != nil {
		return invalidParams("%v", err)
	}
	if err := s.b.Permissions.SetMode(ss.id, m); err != nil {
		return invalidParams("%v", err)
	}
	return nil
}
