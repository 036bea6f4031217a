package tui

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
)

// resolveResults are the judgements a person may record, in the order ↑/↓ cycles them.
var resolveResults = []struct {
	res  govern.Result
	what string
}{
	{govern.ResultSucceeded, "succeeded — the effect took place"},
	{govern.ResultFailed, "failed — nothing took effect"},
}

// resolveDialog is "Resolve by hand": the person chooses succeeded or failed and types a
// short reason; Record is enabled only with both. Cancel is the default button. The core
// (ResolveByHuman) checks the role and that the attempt is still unknown.
type resolveDialog struct {
	sized
	keys   KeyMap
	att    *attemptRef
	actor  govern.Actor
	choice int // -1: none chosen yet
	reason field
	focus  int // 0 Cancel, 1 Record
}

func newResolveDialog(keys KeyMap, att *attemptRef, actor govern.Actor) *resolveDialog {
	return &resolveDialog{keys: keys, att: att, actor: actor, choice: -1, reason: newField(keys.Line, 200)}
}

// ready reports whether Record may be pressed.
func (d *resolveDialog) ready() bool {
	return d.choice >= 0 && strings.TrimSpace(d.reason.String()) != ""
}

func (d *resolveDialog) bindings() bindings {
	k := d.keys.Resolve
	const grp = "Resolve by hand"
	n := len(resolveResults)
	step := func(by int) func() intent {
		return func() intent {
			switch {
			case d.choice < 0 && by < 0:
				d.choice = n - 1
			case d.choice < 0:
				d.choice = 0
			default:
				d.choice = (d.choice + n + by) % n
			}
			return nil
		}
	}
	choose := func() intent {
		if d.focus == 0 {
			return cancelIntent{}
		}
		if !d.ready() {
			return noteIntent{"Record needs a result (↑/↓) and a reason"}
		}
		return closeThen{
			resolveIntent{attempt: d.att.ID, result: resolveResults[d.choice].res, reason: strings.TrimSpace(d.reason.String())},
		}
	}
	return bindings{
		bind(k.Prev, grp, false, nil, step(-1)),
		bind(k.Next, grp, true, nil, step(1)),
		bind(k.Switch, grp, true, nil, func() intent { d.focus = 1 - d.focus; return nil }),
		bind(k.Choose, grp, true, nil, choose),
		bind(k.Cancel, grp, true, nil, func() intent { return cancelIntent{} }),
	}
}

// input types the reason.
func (d *resolveDialog) input(msg tea.Msg) intent {
	d.reason.input(msg)
	return nil
}

func (d *resolveDialog) View() string {
	iw := d.inner(100)
	var b []string
	add := func(s string) { b = append(b, truncate(s, iw)) }
	a := d.att
	add(st.title.Render("Resolve attempt " + a.ID + " by hand"))
	add(
		a.Action + " on " + firstNonEmpty(
			a.Target,
			"no target",
		) + " · by " + firstNonEmpty(
			a.Actor,
			"unknown",
		) + " · " + stamp(
			a.At,
		),
	)
	add(st.warn.Render("outcome UNKNOWN: " + a.Message))
	add(st.dim.Render("Check the source first, or esc then v: the verifier reads the evidence."))
	add(st.dim.Render("Only the audit log is written (resolved_by human); no source changes."))
	add(st.dim.Render(fmt.Sprintf("The core needs role operator; you are %s as %s.", actorName(d.actor), d.actor.Role)))
	b = append(b, "")
	add(st.bold.Render("Result") + st.dim.Render("  "+d.keys.Resolve.Prev.Help().Key+"/"+d.keys.Resolve.Next.Help().Key))
	for i, r := range resolveResults {
		mark := "( )"
		if i == d.choice {
			mark = "(•)"
		}
		s := "  " + mark + " " + r.what
		if i == d.choice {
			s = stateStyle(string(r.res)).Render(s)
		}
		add(s)
	}
	add(st.bold.Render("Reason") + st.dim.Render("  what you checked, in a few words"))
	b = append(b, "> "+d.reason.view(iw-2))
	b = append(b, "")
	b = append(b, buttons(d.focus, d.ready(), "Record"))
	if room := d.h - 2; len(b) > room {
		// Keep the choice, the reason and the buttons: drop the explanations first.
		b = append(b[:1], b[len(b)-room+1:]...)
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}
