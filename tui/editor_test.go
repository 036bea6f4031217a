package tui

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"steward/govern"
	"steward/model"
	"steward/termsafe"
)

// openEditor selects the clarification and opens its answer editor through the menu.
func openEditor(t *testing.T, r *Root) *answerEditor {
	t.Helper()
	send(r, keyMsg("4"), keyMsg("a"), keyMsg("enter"))
	e, ok := r.stack.top().(*answerEditor)
	if !ok {
		t.Fatalf("no editor: %T\n%s", r.stack.top(), plain(r))
	}
	return e
}

// Esc (and an Alt key tmux turns into esc) asked nothing and dropped the
// answer. Now esc asks: keep the draft, discard it, or go back; a kept draft is there when
// the editor opens again for the same item, until it is sent or discarded.
func TestAnswerEditorAsksAndKeepsDrafts(t *testing.T) {
	for _, sz := range sizes {
		t.Run(sz.name, func(t *testing.T) {
			r := newTestRoot(t, sz.w, sz.h, false)
			send(r, SnapshotMsg{populated()})
			e := openEditor(t, r)
			send(r, typeText("Use YAML.")...)
			send(r, keyMsg("esc"))
			if _, ok := r.stack.top().(*discardDialog); !ok || !contains(plain(r), "has not been sent") {
				t.Fatalf("esc with text did not ask:\n%s", plain(r))
			}
			send(r, keyMsg("esc"))
			if r.stack.top() != e || e.area.Value() != "Use YAML." {
				t.Fatalf("back: top %T, text %q", r.stack.top(), e.area.Value())
			}
			send(r, keyMsg("esc"), keyMsg("k"))
			if r.stack.open() || r.drafts["acme/widgets#107"] != "Use YAML." {
				t.Fatalf("keep: open %v, drafts %v", r.stack.open(), r.drafts)
			}
			e = openEditor(t, r)
			if e.area.Value() != "Use YAML." {
				t.Fatalf("the draft did not come back: %q", e.area.Value())
			}
			send(r, keyMsg("esc"), keyMsg("d"))
			if r.stack.open() || len(r.drafts) != 0 || !contains(plain(r), "was discarded") {
				t.Fatalf("discard: open %v, drafts %v", r.stack.open(), r.drafts)
			}
			e = openEditor(t, r)
			if e.area.Value() != "" {
				t.Fatalf("a discarded draft came back: %q", e.area.Value())
			}
			send(r, keyMsg("esc")) // empty: closes without asking
			if r.stack.open() {
				t.Fatalf("esc on an empty editor left %T open", r.stack.top())
			}
		})
	}
}

// The text area keeps what was typed exactly (it is what will be posted) while drawing every
// rune of uncertain width as one U+FFFD: random edits — typing, pastes, newlines, moves,
// backspace, delete-forward, word deletes — leave the typed text and the drawn one rune for
// rune in step, and typing only gives back exactly what was typed.
func TestAnswerAreaKeepsTypedText(t *testing.T) {
	pieces := []string{"a", "é", "e\u0301", "❤️", "🏳️‍🌈", "\u00ad", "界", " ", "word ", "\x1b]0;t\x07", "\u202e"}
	moves := []tea.KeyPressMsg{keyMsg("left"), keyMsg("right"), keyMsg("up"), keyMsg("down"), keyMsg("backspace"),
		{Code: tea.KeyDelete}, {Code: 'w', Mod: tea.ModCtrl}, {Code: tea.KeyHome}, {Code: tea.KeyEnd}, keyMsg("enter")}
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 16))
		a := newAnswerArea("")
		a.SetSize(20, 6)
		var typedOnly strings.Builder
		onlyTyping := seed%4 == 0
		for i := 0; i < 60; i++ {
			switch {
			case onlyTyping || rng.IntN(3) > 0:
				p := pieces[rng.IntN(len(pieces))]
				if rng.IntN(5) == 0 {
					a.Update(tea.PasteMsg{Content: p})
					typedOnly.WriteString(termsafe.Editable(p))
				} else {
					// Key by key, a control sequence is no longer one: its escape is
					// dropped alone and the printable rest is typed text.
					for _, r := range p {
						a.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
						typedOnly.WriteString(termsafe.Editable(string(r)))
					}
				}
			default:
				a.Update(moves[rng.IntN(len(moves))])
			}
			if got, want := a.ta.Value(), drawnText(a.typed); got != want {
				t.Fatalf("seed %d step %d: drawn %q, typed %q drawn as %q", seed, i, got, string(a.typed), want)
			}
			_ = a.View()
		}
		if onlyTyping && a.Value() != typedOnly.String() {
			t.Fatalf("seed %d: typing gave %q, want %q", seed, a.Value(), typedOnly.String())
		}
	}
}

// The answer names the question it answers; when the worker asked something else meanwhile,
// the core refuses question_changed — in the preview, before anything is posted.
func TestFlowAnswerRefusedWhenTheQuestionChanged(t *testing.T) {
	_, cl, repo := clarificationGiteaRepo(t)
	// A question asked the way workers ask: a comment, then the marker.
	n := repo.CreateIssue("maint", "Which format?", "body")
	repo.AddComment("worker", n, "Should the exporter write YAML?")
	repo.AddLabel("worker", n, "status:blocked-pending-clarification")
	repo.RemoveLabel("maint", 1, "status:blocked-pending-clarification")
	clk := &clock{t: time.Now().UTC()}
	c, ws, audit := testCoreGitea(t, cl, clk.Now)
	src := &diskSource{ws: ws, now: clk.Now, ch: make(chan *model.Snapshot, 4), gitea: cl}
	tm := startFlow(t, Options{Core: c, Source: src, AuditPath: audit, Now: clk.Now}, src)
	src.ch <- src.build()
	pressAll(tm, "4")
	waitText(t, tm, "Which format?")
	pressAll(tm, "a")
	waitText(t, tm, "Answer a clarification")
	pressAll(tm, "enter")
	waitText(t, tm, "Your answer (Markdown)", "Should the exporter write YAML?")
	// The worker asks something else: a new comment, and the marker again.
	repo.RemoveLabel("worker", n, "status:blocked-pending-clarification")
	repo.AddComment("worker", n, "Sorry — JSON or TOML?")
	repo.AddLabel("worker", n, "status:blocked-pending-clarification")
	for _, m := range typeText("Use v2.") {
		tm.Send(m)
	}
	pressAll(tm, "ctrl+s")
	waitText(t, tm, "question_changed")
	tm.Send(tea.QuitMsg{})
	tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
	th, err := cl.Thread(t.Context(), n)
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range th.Comments {
		if strings.Contains(cm.Body, "Use v2.") {
			t.Fatal("the answer to the old question was posted")
		}
	}
	recs, _, _ := govern.ReadAudit(audit)
	if len(recs) != 0 {
		t.Fatalf("a preview wrote %d audit records", len(recs))
	}
}
