package tui

import (
	"image/color"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestTheme: the configuration's theme reaches the workbench (it hard-coded dark): light
// and dark render Markdown in different styles; auto follows the terminal's background,
// and an explicit theme is not overridden by it.
func TestTheme(t *testing.T) {
	md := "# Which API?\n\nUse **v2** or `v1`?"
	if renderMarkdown(md, 60, true) == renderMarkdown(md, 60, false) {
		t.Fatal("the light and dark styles render the same")
	}
	white, black := tea.BackgroundColorMsg{Color: color.White}, tea.BackgroundColorMsg{Color: color.Black}
	for _, tc := range []struct {
		theme      string
		bg         tea.Msg
		wantLight  bool
		wantRecall bool
	}{
		{theme: "dark", bg: white, wantLight: false},
		{theme: "light", bg: black, wantLight: true},
		{theme: "auto", bg: white, wantLight: true, wantRecall: true},
		{theme: "auto", bg: black, wantLight: false, wantRecall: true},
		{theme: "", bg: white, wantLight: true, wantRecall: true},
	} {
		r := New(Options{Theme: tc.theme})
		if asks := r.env.theme.ask() != nil; asks != tc.wantRecall {
			t.Errorf("theme %q: asks the terminal = %v", tc.theme, asks)
		}
		r.Update(tc.bg)
		if r.env.light != tc.wantLight {
			t.Errorf("theme %q on %v: light = %v, want %v", tc.theme, tc.bg, r.env.light, tc.wantLight)
		}
	}
}
