package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// messagesView lists every message of this session, newest first and in full, so that a
// toast that vanished can still be read.
type messagesView struct {
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

func (hv *messagesView) input(tea.Msg) intent { return nil }

func (hv *messagesView) View(w, h int) string {
	iw := min(w-4, 120)
	var b []string
	for i := len(hv.items) - 1; i >= 0; i-- {
		x := hv.items[i]
		label := fmt.Sprintf("%s ago [%s] ", since(x.at, hv.now), strings.ToUpper(string(x.state)))
		for _, l := range hang(label, x.text, iw) {
			b = append(b, stateStyle(string(x.state)).Render(l))
		}
	}
	head := []string{st.title.Render(fmt.Sprintf("Messages — %d, newest first", len(hv.items))), ""}
	b = append(head, hv.scroll.window(b, h-4, iw, hv.keys.Dialog.ScrollDown.Help().Key)...)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// opener shows an address the browser could not be asked to open, and offers to copy it.
type opener struct {
	keys KeyMap
	url  string
	why  string
}

func newOpener(keys KeyMap, url, why string) *opener {
	return &opener{keys: keys, url: line(url), why: why}
}

func (o *opener) bindings() bindings {
	k := o.keys.Opener
	const grp = "Address"
	return bindings{
		bind(k.Copy, grp, true, nil, func() intent { return copyAndClose{copyIntent{what: "address", text: o.url}} }),
		bind(k.Close, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (o *opener) input(tea.Msg) intent { return nil }

func (o *opener) View(w, h int) string {
	iw := min(w-4, 100)
	b := []string{st.title.Render("No browser could be opened")}
	b = append(b, hang("", o.why, iw)...)
	b = append(b, "", "The address:")
	b = append(b, strings.Split(wrapText(o.url, iw), "\n")...)
	k := o.keys.Opener
	b = append(b, "", st.bold.Render(k.Copy.Help().Key)+" "+k.Copy.Help().Desc+" (through the terminal, OSC 52)  "+
		st.bold.Render(k.Close.Help().Key)+" "+k.Close.Help().Desc)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// copyAndClose closes the dialog on top, then copies.
type copyAndClose struct{ copyIntent }

func (copyAndClose) isIntent() {}
