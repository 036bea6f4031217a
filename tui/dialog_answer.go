package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"

	"steward/govern"
	"steward/govern/actionid"
)

// answerEditor is where a maintainer writes the answer to a clarification: a text area, a
// Markdown preview of it, then (ctrl+s) the core's own preview in the confirm dialog, which
// opens on top of the editor. Closing it with text in it asks first; an unsent answer is
// kept per item as a draft until it is sent or discarded.
type answerEditor struct {
	sized
	keys       KeyMap
	item       *govern.Item
	question   string
	questionID string
	area       *answerArea
	preview    bool
	md         mdCache
	pmd        mdCache
	// light renders the Markdown in the light style (the workbench's theme).
	light bool
}

func newAnswerEditor(keys KeyMap, item *govern.Item, question, questionID, draft string) *answerEditor {
	return &answerEditor{keys: keys, item: item, question: question, questionID: questionID, area: newAnswerArea(draft)}
}

// styled renders the editor's Markdown in the light style when light (the workbench's theme).
func (e *answerEditor) styled(light bool) *answerEditor {
	e.light = light
	return e
}

func (e *answerEditor) bindings() bindings {
	k := e.keys.Editor
	const grp = "Answer editor"
	hasText := func() bool { return strings.TrimSpace(e.area.Value()) != "" }
	closeIt := func() intent {
		if !hasText() {
			return draftIntent{item: e.item.String()}
		}
		return pushIntent{newDiscard(e.keys, e.item.String(), e.area.Value())}
	}
	return bindings{
		bind(k.Preview, grp, true, nil, func() intent { e.preview = !e.preview; return nil }),
		bind(k.Submit, grp, true, onlyIf(hasText, "the answer is empty"), func() intent {
			return planIntent{
				req:    answerRequest(e.item, e.questionID, e.area.Value()),
				asking: "asking the core to preview the answer…",
				owned:  true,
			}
		}),
		bind(k.Close, grp, true, nil, closeIt),
	}
}

func (e *answerEditor) input(msg tea.Msg) intent {
	if !e.preview {
		e.area.Update(msg)
	}
	return nil
}

func (e *answerEditor) View() string {
	iw := e.inner(110)
	ih := max(e.h-7, 4) // one line is the editor's keys
	var b []string
	b = append(b, st.title.Render(truncate("Answer "+line(e.item.String()), iw)))
	q := strings.Split(e.md.render(e.question, iw, e.light), "\n")
	if len(q) > ih/3 {
		q = append(q[:max(ih/3-1, 1)], st.dim.Render("… (the whole question is in the detail, enter on the row)"))
	}
	b = append(b, q...)
	room := max(ih-len(q)-1, 3)
	if e.preview {
		b = append(b, st.bold.Render("Preview of your answer ("+e.keys.Editor.Preview.Help().Key+" to edit)"))
		out := strings.Split(e.pmd.render(e.area.Value(), iw, e.light), "\n")
		if len(out) > room {
			out = out[:room]
		}
		b = append(b, out...)
	} else {
		e.area.SetSize(iw, room)
		b = append(b, st.bold.Render("Your answer (Markdown)"))
		b = append(b, strings.Split(strings.TrimRight(e.area.View(), "\n"), "\n")...)
	}
	b = append(b, e.keyLine())
	for i := range b {
		b[i] = truncate(b[i], iw)
	}
	return st.box.Width(iw + 4).Render(strings.Join(b, "\n"))
}

// keyLine is the editor's last line: its submit key always (the footer drops a disabled
// key, and at 80 columns it may have no room), with why it does nothing yet.
func (e *answerEditor) keyLine() string {
	k := e.keys.Editor
	submit := st.bold.Render(k.Submit.Help().Key) + " " + k.Submit.Help().Desc
	if strings.TrimSpace(e.area.Value()) == "" {
		submit = st.bold.Render(k.Submit.Help().Key) + st.dim.Render(" "+k.Submit.Help().Desc+" (write the answer first)")
	}
	return submit + st.dim.Render(" · "+k.Preview.Help().Key+" preview · "+k.Close.Help().Key+" close")
}

// answerRequest is the core's answer request: the body, and the question comment it answers
// when known (the core refuses it when the worker asked something else meanwhile).
func answerRequest(item *govern.Item, question, body string) govern.Request {
	return govern.Request{
		Action: actionid.Answer,
		Target: govern.Target{Item: item},
		Params: govern.AnswerParams{Body: body, QuestionComment: question},
	}
}
