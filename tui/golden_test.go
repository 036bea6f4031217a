package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"steward/model"
)

func TestGoldenViews(t *testing.T) {
	states := []struct {
		name string
		snap func() *model.Snapshot
	}{{"populated", populated}, {"empty", empty}, {"unavailable", unavailable}}
	for _, sz := range sizes {
		for _, s := range states {
			for i, id := range pageOrder {
				t.Run(sz.name+"/"+s.name+"/"+id.title(), func(t *testing.T) {
					r := newTestRoot(t, sz.w, sz.h, false)
					send(r, SnapshotMsg{s.snap()})
					send(r, keyMsg(string(rune('1'+i))))
					requireGolden(t, r)
				})
			}
		}
	}
}

func TestGoldenNoSnapshotReadOnly(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, true)
			requireGolden(t, r)
		})
	}
}

var _ = tea.KeyPressMsg{}
