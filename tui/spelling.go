package tui

import (
	"steward/govern"
	"steward/govern/actionid"
	"steward/reponame"
)

// spellingCheck is the workbench's door for an item's spelling (reponame). The workbench
// takes no typed repository name: every item it asks the core about is one a source
// recorded. A record in a spelling Gitea would not accept, or in the clone-path spelling,
// names no repository steward may write to Gitea under, so a request that would (the
// answer) is refused here with the reason; a recover plan acts on the record as it is
// recorded — that is how such a record is cleaned up — and says so in its note.
// refuse reports whether the request must not be asked; note is "" for a canonical item.
func spellingCheck(req govern.Request) (note string, refuse bool) {
	it := req.Target.Item
	if it == nil || reponame.IsCanonical(it.Org, it.Repo) {
		return "", false
	}
	why := "the clone-path spelling of a repository"
	if _, _, err := reponame.Canonical(it.Org, it.Repo); err != nil {
		why = err.Error()
	}
	if req.Action == actionid.Recover {
		return "the item is recorded as " + it.String() + " (" + why + "): the plan acts on that record as it is", false
	}
	return "not asked: the item is recorded as " + it.String() + " (" + why + "); steward acts on Gitea only under a " +
		"spelling Gitea accepts. Recover the record instead", true
}

// spelled is in with spellingCheck's note added to what it says while asked, or, when the
// request must not be asked, why (refusal).
func spelled(in planIntent) (out planIntent, refusal string) {
	note, refused := spellingCheck(in.req)
	if refused {
		return in, line(note)
	}
	if note != "" {
		in.asking += " — " + line(note)
	}
	return in, ""
}
