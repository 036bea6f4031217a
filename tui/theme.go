package tui

import tea "charm.land/bubbletea/v2"

// theme is the configuration's theme setting (Options.Theme): dark, light, or auto — any
// other value, "" included — where the terminal's background colour chooses. It decides the
// Markdown style of questions and answers (glamour's dark or light).
type theme string

// auto reports whether the terminal's background chooses the style.
func (t theme) auto() bool { return t != "dark" && t != "light" }

// ask is the command that asks the terminal for its background colour, nil when the
// setting already chose.
func (t theme) ask() tea.Cmd {
	if t.auto() {
		return tea.RequestBackgroundColor
	}
	return nil
}

// light is whether Markdown is drawn in the light style once the terminal answered m (was
// before it): the background's when auto, else the setting's, whatever the terminal says.
func (t theme) light(m tea.BackgroundColorMsg, was bool) bool {
	if t.auto() {
		return !m.IsDark()
	}
	return was
}
