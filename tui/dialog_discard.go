package tui

import (
	"fmt"
	"strings"
)

// discardDialog asks before the answer editor closes with text in it.
type discardDialog struct {
	sized
	noInput
	keys       KeyMap
	item, text string
}

func newDiscard(keys KeyMap, item, text string) *discardDialog {
	return &discardDialog{keys: keys, item: item, text: text}
}

func (d *discardDialog) bindings() bindings {
	k := d.keys.Discard
	const grp = "Closing the answer editor"
	return bindings{
		bind(k.Keep, grp, true, nil, func() intent { return draftIntent{item: d.item, text: d.text, keep: true} }),
		bind(k.Discard, grp, true, nil, func() intent { return draftIntent{item: d.item} }),
		bind(k.Back, grp, true, nil, func() intent { return closeIntent{} }),
	}
}

func (d *discardDialog) View() string {
	iw := d.inner(70)
	k := d.keys.Discard
	b := []string{st.title.Render("Close the answer to " + line(d.item) + "?")}
	b = append(
		b,
		hang("", fmt.Sprintf("Your answer has %d characters and has not been sent.", len([]rune(d.text))), iw)...)
	b = append(b, "",
		st.bold.Render(k.Keep.Help().Key)+"  "+k.Keep.Help().Desc+" (a opens it again)",
		st.bold.Render(k.Discard.Help().Key)+"  "+k.Discard.Help().Desc,
		st.bold.Render(k.Back.Help().Key)+"  "+k.Back.Help().Desc)
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
