package headless

import (
	"strconv"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Blank is the physical limit of a frame: a model that does no work but fill a screen of its
// size, in the same alternate-screen, mouse-reporting mode as the workbench. Every Data or
// key message changes its first line, so each is redrawn.
type Blank struct {
	w, h   int
	n      int
	status string
	tick   time.Duration
}

var _ tea.Model = (*Blank)(nil)

// Data is a message for Blank: bytes read by a limit measure, shown by their count.
type Data struct{ N int }

// clockMsg is Blank's own tick.
type clockMsg time.Time

// NewBlank returns the empty program; tick > 0 redraws a clock that often, like the
// workbench's countdowns (0: never).
func NewBlank(tick time.Duration) *Blank { return &Blank{w: 80, h: 24, tick: tick} }

// Init starts the clock.
func (b *Blank) Init() tea.Cmd { return b.clock() }

func (b *Blank) clock() tea.Cmd {
	if b.tick <= 0 {
		return nil
	}
	return tea.Tick(b.tick, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// Update counts what it is sent.
func (b *Blank) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		b.w, b.h = msg.Width, msg.Height
	case Data:
		b.n++
		b.status = "read " + strconv.Itoa(msg.N) + " bytes"
	case tea.KeyPressMsg:
		b.n++
		b.status = "key " + msg.String()
	case clockMsg:
		b.status = time.Time(msg).Format("15:04:05")
		return b, b.clock()
	}
	return b, nil
}

// View fills the screen: a status line, then a grid of dots.
func (b *Blank) View() tea.View {
	var sb strings.Builder
	sb.Grow(b.w * b.h)
	first := strconv.Itoa(b.n) + " " + b.status
	if len(first) > b.w {
		first = first[:b.w]
	}
	sb.WriteString(first)
	sb.WriteString(strings.Repeat(" ", b.w-len(first)))
	row := strings.Repeat(".", b.w)
	for i := 1; i < b.h; i++ {
		sb.WriteByte('\n')
		sb.WriteString(row)
	}
	v := tea.NewView(sb.String())
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.WindowTitle = "blank"
	return v
}
