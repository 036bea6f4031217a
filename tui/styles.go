package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// palette: ANSI colours only, so every terminal (and every golden) draws them the same.
var (
	colRed     color.Color = lipgloss.Red
	colYellow  color.Color = lipgloss.Yellow
	colGreen   color.Color = lipgloss.Green
	colCyan    color.Color = lipgloss.Cyan
	colMagenta color.Color = lipgloss.Magenta
	colGrey    color.Color = lipgloss.BrightBlack
	colBlue    color.Color = lipgloss.Blue
)

// styles are the workbench's styles, built once.
type styles struct {
	header, tabOn, tabOff, dim, bold, sel, mark, warn, bad, good, badge, title, box, colHead lipgloss.Style
	btnOn, btnOff, btnDisabled, field                                                        lipgloss.Style
}

func newStyles() styles {
	return styles{
		header:      lipgloss.NewStyle().Bold(true),
		tabOn:       lipgloss.NewStyle().Bold(true).Reverse(true),
		tabOff:      lipgloss.NewStyle().Foreground(colGrey),
		dim:         lipgloss.NewStyle().Foreground(colGrey),
		bold:        lipgloss.NewStyle().Bold(true),
		sel:         lipgloss.NewStyle().Reverse(true),
		mark:        lipgloss.NewStyle().Foreground(colMagenta).Bold(true),
		warn:        lipgloss.NewStyle().Foreground(colYellow),
		bad:         lipgloss.NewStyle().Foreground(colRed).Bold(true),
		good:        lipgloss.NewStyle().Foreground(colGreen),
		badge:       lipgloss.NewStyle().Foreground(colRed).Bold(true).Reverse(true),
		title:       lipgloss.NewStyle().Bold(true).Foreground(colCyan),
		box:         lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(colBlue).Padding(0, 1),
		colHead:     lipgloss.NewStyle().Bold(true).Underline(true),
		btnOn:       lipgloss.NewStyle().Reverse(true).Bold(true).Padding(0, 1),
		btnOff:      lipgloss.NewStyle().Padding(0, 1),
		btnDisabled: lipgloss.NewStyle().Foreground(colGrey).Strikethrough(true).Padding(0, 1),
		field:       lipgloss.NewStyle().Underline(true).Bold(true),
	}
}

var st = newStyles()
