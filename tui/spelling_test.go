package tui

import (
	"strings"
	"testing"

	"steward/govern"
	"steward/govern/actionid"
)

// TestSpellingCheck: the workbench asks the core about a recorded item in a spelling
// Gitea would not accept only to recover the record (and says so); an answer, which acts
// on Gitea, is refused with the reason; a canonical item, in any case, passes untouched.
func TestSpellingCheck(t *testing.T) {
	item := func(org, repo string) *govern.Item {
		return &govern.Item{Remote: "origin", Org: org, Repo: repo, Kind: "issue", Number: 7}
	}
	for _, tc := range []struct {
		action string
		it     *govern.Item
		refuse bool
		note   string
	}{
		{actionid.Answer, item("acme", "widgets"), false, ""},
		{actionid.Answer, item("ACME", "Widgets"), false, ""},
		{actionid.Recover, item("acme", "widgets"), false, ""},
		{actionid.Answer, nil, false, ""},
		{actionid.Answer, item("acme", "./widgets"), true, `not asked: the item is recorded as acme/./widgets#7 (repository name "./widgets" is not one Gitea accepts: it is a path`},
		{actionid.Answer, item("acme", "widgets.git"), true, "the clone-path spelling of a repository"},
		{actionid.Answer, item("acme", "ｗｉｄｇｅｔｓ"), true, "full-width characters"},
		{actionid.Recover, item("acme", "./widgets"), false, "the plan acts on that record as it is"},
		{actionid.Recover, item("acme", "widgets.git"), false, "recorded as acme/widgets.git#7 (the clone-path spelling of a repository)"},
	} {
		note, refuse := spellingCheck(govern.Request{Action: tc.action, Target: govern.Target{Item: tc.it}})
		if refuse != tc.refuse || tc.note == "" && note != "" || !strings.Contains(note, tc.note) {
			t.Errorf("%s %v: note %q refuse %v; want refuse %v and a note with %q", tc.action, tc.it, note, refuse, tc.refuse, tc.note)
		}
	}
}
