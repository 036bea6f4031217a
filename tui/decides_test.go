package tui

import (
	"fmt"
	"strings"
	"testing"
)

// The screens at 80×24 and 200×50 where what a person acts on must show: the Orphans'
// Action, the inbox's "what → action", the Contention's Next, and the tabs.
var decideSizes = []struct {
	name string
	w, h int
}{{"80x24", 80, 24}, {"200x50", 200, 50}}

func TestGoldenDecides(t *testing.T) {
	for _, sz := range decideSizes {
		for _, id := range []pageID{pageOverview, pageContention, pageOrphans} {
			t.Run(sz.name+"/"+id.title(), func(t *testing.T) {
				r := newTestRoot(t, sz.w, sz.h, false)
				send(r, SnapshotMsg{populated()}, keyMsg(fmt.Sprint(int(id)+1)))
				requireGolden(t, r)
			})
		}
	}
}

// The deciding columns were the ones cut: at 80 columns the Orphans' Action was dropped
// while the Evidence stayed, the inbox cut "→ lock.retire" to "→ l…", and even at 200
// columns an Action over 30 cells was cut. Now the Action column is shown at every width,
// the Evidence gives way first, an action that fits beside the identity columns is drawn
// whole, and every inbox row keeps its "→ action" whole.
func TestDecidingColumnsNeverCut(t *testing.T) {
	for _, sz := range decideSizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{populated()}, keyMsg("5"))
			tbl := r.list().tbl
			for _, h := range tbl.hidden() {
				if h == "Action" {
					t.Fatalf("the Action column is dropped at %s; hidden %v", sz.name, tbl.hidden())
				}
			}
			room := sz.w - gutter
			for i, c := range tbl.cols {
				if !c.Decides {
					room -= tbl.widths[i] + 1
				}
			}
			f := plain(r)
			for _, ri := range tbl.view {
				act := tbl.rows[ri].cell(3)
				if len([]rune(act)) <= room && !strings.Contains(f, act) {
					t.Errorf("the action %q (fits in %d cells) is not drawn whole:\n%s", act, room, f)
				}
			}
			if sz.w >= 200 {
				if len(tbl.hidden()) > 0 {
					t.Errorf("at %d columns, %v dropped", sz.w, tbl.hidden())
				}
				for _, ri := range tbl.view {
					if act := tbl.rows[ri].cell(3); !strings.Contains(f, act) {
						t.Errorf("the action %q is cut at %d columns", act, sz.w)
					}
				}
			}

			send(r, keyMsg("1"))
			f = plain(r)
			tbl = r.list().tbl
			for _, ri := range tbl.view {
				what := tbl.rows[ri].cell(3)
				at := strings.LastIndex(what, " → ")
				if at < 0 {
					continue
				}
				if tail := what[at:]; !strings.Contains(f, tail) {
					t.Errorf("the inbox row %q lost its action %q:\n%s", what, tail, f)
				}
			}
		})
	}
}

// keepTail cuts the "what" before the arrow and keeps the action whole.
func TestKeepTail(t *testing.T) {
	for _, c := range []struct {
		s    string
		w    int
		want string
	}{
		{"live-lock-dead-owner → lock.retire", 40, "live-lock-dead-owner → lock.retire"},
		{"live-lock-dead-owner → lock.retire", 25, "live-lock-… → lock.retire"},
		{"live-lock-dead-owner → lock.retire", 16, "→ lock.retire"},
		{"live-lock-dead-owner → lock.retire", 8, "→ lock.…"},
		{"asks: Which config format?", 12, "asks: Which…"},
		{"two live locks (a, b) → both owners are alive: steward will not pick a winner", 36, "two live lo… → both owners are aliv…"},
	} {
		if got := keepTail(c.s, c.w, " → "); got != c.want {
			t.Errorf("keepTail(%q, %d) = %q, want %q", c.s, c.w, got, c.want)
		}
	}
}

// The tabs at 80 columns read "Over Clai Cont": cut stems. Now at every width each tab names
// its view by a whole word (its title, or its short title), the schemes are not mixed, and
// the current view's tab is drawn reversed.
func TestTabsReadable(t *testing.T) {
	words := map[string]bool{}
	for _, id := range pageOrder {
		words[id.title()], words[tabInfo[id].short] = true, true
	}
	for _, w := range []int{70, 80, 100, 200} {
		for _, cur := range []pageID{pageOverview, pageClarifications, pageSessions} {
			r := newTestRoot(t, w, 24, false)
			send(r, SnapshotMsg{populated()}, keyMsg(fmt.Sprint(int(cur)+1)))
			tabs := strings.Split(plain(r), "\n")[1]
			var names []string
			for _, f := range strings.FieldsFunc(tabs, func(c rune) bool { return c == ' ' || c == '│' }) {
				if f[0] < '0' || f[0] > '9' {
					names = append(names, f)
				}
			}
			if len(names) != len(pageOrder) {
				t.Fatalf("at %d columns the tabs name %d views, want %d: %q", w, len(names), len(pageOrder), tabs)
			}
			for i, n := range names {
				if title := pageOrder[i].title(); !words[n] || n != title && strings.HasPrefix(title, n) {
					t.Errorf("at %d columns a tab reads %q, not a whole name of %s: %q", w, n, title, tabs)
				}
			}
			on := st.tabOn.Render(r.chrome().tabLabel(int(cur), cur, r.chrome().tabScheme()))
			if !strings.Contains(strings.Split(r.Render(), "\n")[1], on) {
				t.Errorf("at %d columns the tab of %s is not drawn reversed", w, cur.title())
			}
		}
	}
}
