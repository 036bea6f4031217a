package model

import (
	"strings"
	"testing"
	"time"

	"steward/leases/leaserec"
)

// TestGiteaRemoteFollowsTheRecordsAsTheyChange: a live engine settles Gitea's remote again
// as lock files and work item rows come, go and change remote, and files Gitea's facts
// under the remote settled (the counts go down as well as up; a change of how the remote
// is known, or of the remote alone, re-files them).
func TestGiteaRemoteFollowsTheRecordsAsTheyChange(t *testing.T) {
	cfg := Config{Org: "acme", Repo: "widgets"}
	prgsLock := lockOn("prgs", lock("a.json", 1, "s1", "", time.Hour, LivenessAlive))
	for _, tc := range []struct {
		name    string
		steps   func(e *Engine)
		remote  string
		how     string
		note    string // what the Gitea source's notes say
		factsOn string // the remote Gitea's #2 is listed under ("" for not listed)
	}{
		{"a lock file settles the remote", func(e *Engine) {
			e.SetLock("a.json", &prgsLock)
		}, "prgs", remoteFromLocks, "inferred from the lock files", "prgs"},
		{"the last lock file naming it gone, no remote is known", func(e *Engine) {
			e.SetLock("a.json", &prgsLock)
			e.SetLock("a.json", nil)
		}, "", remoteNone, "no DB row or lock file names acme/widgets yet", ""},
		{"a lock file rewritten keeps its count", func(e *Engine) {
			e.SetLock("a.json", &prgsLock)
			e.SetLock("a.json", &prgsLock)
			e.SetLock("a.json", nil)
		}, "", remoteNone, "no DB row or lock file names acme/widgets yet", ""},
		{"a work item row settles it over the locks", func(e *Engine) {
			e.SetLock("a.json", &prgsLock)
			e.PutWorkItem(workItemOn("prgs", 1))
		}, "prgs", remoteFromDB, "inferred from the control-plane DB", "prgs"},
		{"a work item row moved to another remote moves it", func(e *Engine) {
			e.PutWorkItem(workItemOn("prgs", 1))
			e.PutWorkItem(workItemOn("origin", 1))
		}, "origin", remoteFromDB, "remote origin inferred from the control-plane DB", "origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(cfg)
			in := baseInput()
			in.Gitea = []GiteaFact{openFact(2, "open")}
			e.load(in)
			tc.steps(e)
			e.Flush(now)
			s := e.Publish(now)
			if r := e.Remote(); r.Remote != tc.remote || r.How != tc.how || len(r.Named) != 0 {
				t.Fatalf("remote %+v, want %q settled %s", r, tc.remote, tc.how)
			}
			if notes := strings.Join(s.Sources.Gitea.Notes, "|"); !strings.Contains(notes, tc.note) {
				t.Errorf("notes %q, want %q", notes, tc.note)
			}
			var on []string
			for _, r := range rowsOf(s, 2) {
				on = append(on, r.Item.Remote)
			}
			if got := strings.Join(on, ","); got != tc.factsOn {
				t.Errorf("Gitea's #2 listed under %q, want %q", got, tc.factsOn)
			}
		})
	}
}

// TestGiteaNoteOnOtherRemotesReadsAsOneSentence: the note on records under a remote
// besides Gitea's is the note itself when nothing else is said, and joins what is said
// before it with "; ".
func TestGiteaNoteOnOtherRemotesReadsAsOneSentence(t *testing.T) {
	other := "records name acme/widgets under remote origin too: those items are not joined with Gitea's facts " +
		"(Gitea's are filed under prgs)"
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"configured", Config{Org: "acme", Repo: "widgets", Remote: "prgs"}, other},
		{"inferred from the DB", Config{Org: "acme", Repo: "widgets"},
			"remote prgs inferred from the control-plane DB's work_items for acme/widgets (gitea.remote is not set): " +
				"Gitea's items are joined with the items named prgs; " + other},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := baseInput()
			in.Sessions = []SessionObs{sess("s1", "active")}
			in.Leases = []LeaseObs{leaseOn("prgs", lease("L1", 1, "s1", leaserec.StatusActive, time.Hour, LivenessAlive))}
			in.WorkItems = []leaserec.WorkItem{workItemOn("prgs", 1)}
			in.Locks = []LockObs{lock("b.json", 2, "s1", "", time.Hour, LivenessAlive)} // origin
			in.Gitea = []GiteaFact{openFact(1, "open")}
			s := Build(in, tc.cfg, now)
			if len(s.Sources.Gitea.Notes) != 1 || s.Sources.Gitea.Notes[0] != tc.want {
				t.Fatalf("notes %q\nwant [%q]", s.Sources.Gitea.Notes, tc.want)
			}
		})
	}
}
