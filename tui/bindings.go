package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// binding is one key of a page or a dialog as it applies now: the key and its help text
// (from the KeyMap), why it does nothing here now, and what it does. Pages and dialogs
// declare their bindings; the root matches keys against them, and help, the footer, the
// palette and the note a disabled key leaves are generated from the same declarations.
type binding struct {
	key.Binding
	// group titles the binding in help ("Rows", "Acting", …).
	group string
	// short puts it in the footer when it is enabled.
	short bool
	// why says why the key does nothing here now ("" when it applies); nil means always.
	why func() string
	// do is what the key does; it returns an intent for the root (or nil).
	do func() intent
	// typing: the key is declared (help, the footer) but edits the field being typed in,
	// which takes it as input.
	typing bool
}

// reason is why the binding is disabled now, "" when it applies.
func (b binding) reason() string {
	if b.why == nil {
		return ""
	}
	return b.why()
}

// bindings is a page's or a dialog's declaration of its keys. It is the help.KeyMap help and
// the footer are drawn from.
type bindings []binding

var _ help.KeyMap = bindings(nil)

// enabled returns the key.Binding of b, enabled only when it applies now.
func (b binding) enabled() key.Binding {
	kb := b.Binding
	kb.SetEnabled(b.reason() == "")
	return kb
}

// ShortHelp is the footer: the enabled bindings marked short, in declaration order.
func (bs bindings) ShortHelp() []key.Binding {
	var out []key.Binding
	for _, b := range bs {
		if b.short && b.reason() == "" {
			out = append(out, b.Binding)
		}
	}
	return out
}

// FullHelp is help's columns: one per group, in the order groups first appear; bindings that
// do not apply now are disabled (help drops them).
func (bs bindings) FullHelp() [][]key.Binding {
	var order []string
	byGroup := map[string][]key.Binding{}
	for _, b := range bs {
		if _, ok := byGroup[b.group]; !ok {
			order = append(order, b.group)
		}
		byGroup[b.group] = append(byGroup[b.group], b.enabled())
	}
	out := make([][]key.Binding, 0, len(order))
	for _, g := range order {
		out = append(out, byGroup[g])
	}
	return out
}

// groups returns the group titles in the order FullHelp returns them.
func (bs bindings) groups() []string {
	var order []string
	seen := map[string]bool{}
	for _, b := range bs {
		if !seen[b.group] {
			seen[b.group] = true
			order = append(order, b.group)
		}
	}
	return order
}

// match returns the first binding k presses.
func (bs bindings) match(k tea.KeyPressMsg) (binding, bool) {
	for _, b := range bs {
		if key.Matches(k, b.Binding) {
			return b, true
		}
	}
	return binding{}, false
}

// press runs the binding k presses: its intent when it applies, a note saying why when it
// does not. ok is false when no binding has k.
func (bs bindings) press(k tea.KeyPressMsg) (in intent, ok bool) {
	b, ok := bs.match(k)
	if !ok || b.typing {
		return nil, false
	}
	return b.run(), true
}

// run is what pressing (or choosing in the palette) b does now.
func (b binding) run() intent {
	if why := b.reason(); why != "" {
		return noteIntent{text: b.Help().Desc + ": " + why}
	}
	if b.do == nil {
		return nil
	}
	return b.do()
}

// bind declares one binding.
func bind(kb key.Binding, group string, short bool, why func() string, do func() intent) binding {
	return binding{Binding: kb, group: group, short: short, why: why, do: do}
}

// typing declares a key that edits the field being typed in: it is shown in help and the
// footer, and the field takes it as input.
func typing(kb key.Binding, group string, short bool) binding {
	return binding{Binding: kb, group: group, short: short, typing: true}
}

// onlyIf returns a reason function: "" while cond() holds, else reason.
func onlyIf(cond func() bool, reason string) func() string {
	return func() string {
		if cond() {
			return ""
		}
		return reason
	}
}
