package session

// Settings is the data of session/settings: the choices a user made for
// one session that outlive the process, recorded whole each time one
// changes. Empty values are absent. Provider says which provider Model
// belongs to; a session continued with another provider keeps its default
// model.
type Settings struct {
	Mode            string `json:"mode,omitempty"`
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	ReasoningEffort string `json:"reasoningEffort,omitempty"`
}

// LastSettings returns the latest session/settings of events; ok is false
// when there is none (or only unreadable ones).
func LastSettings(events []Event) (Settings, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != TypeSettings {
			continue
		}
		var s Settings
		if events[i].DecodeData(&s) == nil {
			return s, true
		}
	}
	return Settings{}, false
}
