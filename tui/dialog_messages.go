package tui

import (
	"fmt"
	"strings"
	"time"
)

// messagesView lists every message of this session, newest first and in full, so that a
// toast that vanished can still be read.
type messagesView struct {
	sized
	noInput
	keys   KeyMap
	items  []toast
	now    time.Time
	scroll pager
}

func newMessages(keys KeyMap, items []toast, now time.Time) *messagesView {
	return &messagesView{keys: keys, items: append([]toast(nil), items...), now: now}
}

func (hv *messagesView) bindings() bindings {
	d := hv.keys.Dialog
	const grp = "Messages"
	closeIt := func() intent { return closeIntent{} }
	return bindings{
		bind(d.Down, grp, false, nil, func() intent { hv.scroll.by(1); return nil }),
		bind(d.Up, grp, false, nil, func() intent { hv.scroll.by(-1); return nil }),
		bind(d.ScrollDown, grp, true, nil, func() intent { hv.scroll.by(10); return nil }),
		bind(d.ScrollUp, grp, true, nil, func() intent { hv.scroll.by(-10); return nil }),
		bind(d.Cancel, grp, true, nil, closeIt),
		bind(hv.keys.Global.Toasts, grp, false, nil, closeIt),
	}
}

func (hv *messagesView) View() string {
	iw := hv.inner(120)
	var b []string
	for i := len(hv.items) - 1; i >= 0; i-- {
		x := hv.items[i]
		label := fmt.Sprintf("%s ago [%s] ", since(x.at, hv.now), strings.ToUpper(string(x.state)))
		for _, l := range hang(label, x.text, iw) {
			b = append(b, stateStyle(string(x.state)).Render(l))
		}
	}
	head := []string{st.title.Render(fmt.Sprintf("Messages — %d, newest first", len(hv.items))), ""}
	b = append(head, hv.scroll.window(b, hv.h-4, iw, hv.keys.Dialog.ScrollDown.Help().Key)...)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
