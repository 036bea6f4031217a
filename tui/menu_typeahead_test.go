package tui

import (
	"testing"

	"steward/govern"
	"steward/govern/actionid"
)

// An enter pressed while the core's previews are still coming is kept and acted on when
// they arrive — if the option is usable; a refused one keeps the menu open with its reason.
func TestMenuChoiceTypedAhead(t *testing.T) {
	reclaim := menuOption{action: actionid.ReclaimExpired, title: "Reclaim", previews: []govern.Preview{allowedPreview()}}
	refused := menuOption{action: actionid.ReclaimExpired, title: "Reclaim", previews: []govern.Preview{refusedPreview()}}
	for _, tc := range []struct {
		name   string
		keys   []string
		opts   []menuOption
		choose bool
	}{
		{"enter while loading, allowed", []string{"enter"}, []menuOption{reclaim}, true},
		{"enter while loading, refused", []string{"enter"}, []menuOption{refused}, false},
		{"nothing pressed", nil, []menuOption{reclaim}, false},
		{"enter then cancel", []string{"enter", "esc"}, []menuOption{reclaim}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &actionMenu{keys: defaultKeyMap(), names: []string{"row"}, loading: true, opts: tc.opts}
			cancelled := false
			for _, k := range tc.keys {
				in, _ := m.bindings().press(keyMsg(k))
				switch in := in.(type) {
				case nil:
				case cancelIntent:
					cancelled = true
				default:
					t.Fatalf("%s while loading answered %T", k, in)
				}
			}
			if cancelled {
				return // the dialog is closed; nothing arrives at it
			}
			in := m.loaded(tc.opts)
			if c, ok := in.(closeThen); ok {
				in = c.next // the menu closes, then the choice is made
			}
			if _, ok := in.(chooseIntent); ok != tc.choose {
				t.Fatalf("after the previews: %T, want a choice %v", in, tc.choose)
			}
			if m.chosen || m.loading {
				t.Fatalf("state left: chosen %v loading %v", m.chosen, m.loading)
			}
		})
	}
}
