package tui

import (
	"strings"
)

// opener shows an address the browser could not be asked to open, and offers to copy it.
type opener struct {
	sized
	noInput
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
		bind(k.Copy, grp, true, nil, func() intent { return closeThen{copyIntent{what: "address", text: o.url}} }),
		bind(k.Close, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (o *opener) View() string {
	iw := o.inner(100)
	b := []string{st.title.Render("No browser could be opened")}
	b = append(b, hang("", o.why, iw)...)
	b = append(b, "", "The address:")
	b = append(b, strings.Split(wrapText(o.url, iw), "\n")...)
	k := o.keys.Opener
	b = append(b, "", st.bold.Render(k.Copy.Help().Key)+" "+k.Copy.Help().Desc+" (through the terminal, OSC 52)  "+
		st.bold.Render(k.Close.Help().Key)+" "+k.Close.Help().Desc)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
