package model

import (
	"slices"
	"strings"
)

// This file joins Gitea's facts with the items the lock files and the DB name. The
// supervised system names an item (remote, org, repo, kind, number), the remote as its
// workers call the repository's git remote (the seed's assign_and_lease(remote="prgs", …));
// Gitea knows only owner/repo and the number. Gitea's facts are filed under one remote —
// the configured one (Config.Remote), else the one the DB's rows for the configured
// repository all name — so that one item is one row everywhere. When the rows name several
// remotes and none is configured, steward refuses to guess: Gitea's facts are joined with
// nothing, and the snapshot says why.

// How Gitea's remote was settled (RemoteJoin.How).
const (
	remoteConfigured    = "configured"     // Config.Remote (gitea.remote)
	remoteFromDB        = "inferred-db"    // the one remote the DB's work_items name for the repository
	remoteFromLocks     = "inferred-locks" // no DB row names the repository; the one remote its lock files name
	remoteNone          = "none"           // no row or lock names the repository yet: nothing to join with
	remoteAmbiguous     = "ambiguous"      // the rows name several remotes and none is configured
	remoteNoGiteaRepo   = ""               // no Gitea repository is configured
	remoteJoinFieldName = "gitea.remote"
)

// RemoteJoin says under which remote Gitea's facts are filed, how that was settled, and
// which other remotes the supervised system's records name for the same repository.
type RemoteJoin struct {
	Remote string
	How    string
	// Named are the remotes the DB's rows (or, with none, the lock files) name for the
	// repository when How is remoteAmbiguous; otherwise the remotes they name besides
	// Remote, whose items are not joined with Gitea's facts.
	Named []string
}

// remoteCount counts, per remote as written (trimmed), the records of the configured
// repository that name it.
type remoteCount map[string]int

// add counts d more records naming r and reports whether the set of remotes named changed.
func (m remoteCount) add(r string, d int) bool {
	r = strings.TrimSpace(r)
	before := m[r] > 0
	if m[r] += d; m[r] <= 0 {
		delete(m, r)
	}
	return before != (m[r] > 0)
}

func (m remoteCount) names() []string {
	out := make([]string, 0, len(m))
	for r := range m {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// inRepo reports whether it is an item of the configured Gitea repository.
func (e *Engine) inRepo(it *Item) bool {
	c := &e.env.cfg
	return it != nil && c.Org != "" && c.Repo != "" && it.InRepo(c.Org, c.Repo)
}

// countWorkItem moves work item id's remote count from old (nil: new row) to it.
func (e *Engine) countWorkItem(old *Item, it Item) {
	changed := false
	if old != nil && e.inRepo(old) {
		changed = e.wiRemotes.add(old.Remote, -1)
	}
	if e.inRepo(&it) {
		changed = e.wiRemotes.add(it.Remote, 1) || changed
	}
	if changed {
		e.checkRemote()
	}
}

// countLock counts a live, readable lock file of the repository (d = +1 set, -1 gone) and
// re-settles Gitea's remote when the remotes the lock files name changed.
func (e *Engine) countLock(lo *LockObs, d int) {
	if lo == nil || lo.Entry.Unreadable != nil || !lo.Entry.HasKey {
		return
	}
	if it := itemOfKey(lo.Entry.Key); e.inRepo(it) && e.lockRemotes.add(it.Remote, d) {
		e.checkRemote()
	}
}

// resolveRemote settles Gitea's remote from the configuration and the records held.
func (e *Engine) resolveRemote() RemoteJoin {
	c := &e.env.cfg
	if c.Org == "" || c.Repo == "" {
		return RemoteJoin{How: remoteNoGiteaRepo}
	}
	others := func(known string, m ...remoteCount) []string {
		var out []string
		for _, x := range m {
			for _, r := range x.names() {
				if r != known && !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
		slices.Sort(out)
		return out
	}
	if r := strings.TrimSpace(c.Remote); r != "" {
		return RemoteJoin{Remote: r, How: remoteConfigured, Named: others(r, e.wiRemotes, e.lockRemotes)}
	}
	for _, src := range []struct {
		m   remoteCount
		how string
	}{{e.wiRemotes, remoteFromDB}, {e.lockRemotes, remoteFromLocks}} {
		switch names := src.m.names(); len(names) {
		case 0:
			continue
		case 1:
			return RemoteJoin{Remote: names[0], How: src.how, Named: others(names[0], e.wiRemotes, e.lockRemotes)}
		default:
			return RemoteJoin{How: remoteAmbiguous, Named: names}
		}
	}
	return RemoteJoin{How: remoteNone}
}

// checkRemote re-settles Gitea's remote; when it changed, Gitea's facts are filed anew
// and every unit is re-derived.
func (e *Engine) checkRemote() {
	r := e.resolveRemote()
	if r.Remote == e.env.remote.Remote && r.How == e.env.remote.How && slices.Equal(r.Named, e.env.remote.Named) {
		return
	}
	e.env.remote = r
	e.applyGitea()
	for k := range e.units {
		e.dirty[k] = true
	}
}

// Remote returns how Gitea's facts are joined with the other sources' items now.
func (e *Engine) Remote() RemoteJoin { return e.env.remote }

// remoteNote is what the Gitea source says about the join ("" when there is nothing to
// say), and remoteFinding the finding when steward refused to guess.
func (e *Engine) remoteNote() (note, finding string) {
	if !e.gitea.health.Usable() {
		return "", "" // no Gitea fact was read: nothing is joined, nothing to say
	}
	r, c := e.env.remote, e.env.cfg
	repo := c.Org + "/" + c.Repo
	var named string
	if len(r.Named) > 0 {
		named = strings.Join(r.Named, ", ")
	}
	switch r.How {
	case remoteFromDB:
		note = "remote " + r.Remote + " inferred from the control-plane DB's work_items for " + repo + " (" +
			remoteJoinFieldName + " is not set): Gitea's items are joined with the items named " + r.Remote
	case remoteFromLocks:
		note = "remote " + r.Remote + " inferred from the lock files of " + repo + " (" + remoteJoinFieldName + " is not " +
			"set, and no DB row names " + repo + "): Gitea's items are joined with the items named " + r.Remote
	case remoteNone:
		note = "no DB row or lock file names " + repo + " yet (" + remoteJoinFieldName + " is not set): Gitea's items " +
			"carry no remote until one does"
	case remoteAmbiguous:
		finding = "gitea.remote is not set and the supervised system's records name " + repo + " under several remotes " +
			"(" + named +
			"): steward does not guess which one Gitea is — Gitea's items are not joined with the lock files' and the DB's; " +
			"set gitea.remote (or --gitea-remote)"
		return "", finding
	}
	if r.How != remoteAmbiguous && named != "" {
		s := "records name " + repo + " under remote " + named + " too: those items are not joined with Gitea's facts " +
			"(Gitea's are filed under " + r.Remote + ")"
		if note != "" {
			note += "; "
		}
		note += s
	}
	return note, ""
}

// aliasKey is an item's key without its remote: the units of one repository, kind and
// number under several remote names share it.
func aliasKey(it *Item) string {
	k := it.key()
	return k[strings.IndexByte(k, 0)+1:]
}

// itemsInventory says whether the items listed are every open item of the repository.
func (e *Engine) itemsInventory() ItemsInventory {
	h := e.env.gitea
	switch {
	case h.Complete():
		return ItemsInventory{Complete: true}
	case h.Status == StatusNotConfigured || h.Status == "":
		why := h.Reason
		if why == "" {
			why = "Gitea not configured"
		}
		return ItemsInventory{Reason: why + ": items lists only what the lock files and the DB name (partial inventory)"}
	case h.Status == StatusUnavailable:
		return ItemsInventory{
			Reason: "Gitea unavailable (" + h.Reason + "): items lists only what the lock files and the DB name (partial " +
				"inventory)",
		}
	}
	return ItemsInventory{
		Reason: "Gitea read in part (" + h.Reason + "): open items it did not return are not listed (partial inventory)",
	}
}
