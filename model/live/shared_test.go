package live

import (
	"strings"
	"testing"
	"unsafe"

	"steward/leases"
	"steward/leases/leaserec"
	"steward/model"
)

// TestObservationsShareRepeatedText: two lease rows and two session rows read apart (each
// value its own copy, as the DB driver hands them over) are kept with one copy of the text
// that repeats across a fleet — role, phase, status, task class, host, the item's remote,
// org and repo — while each row's own values stay its own.
func TestObservationsShareRepeatedText(t *testing.T) {
	own := func(s string) string { return strings.Clone(s) }
	lease := func(id string) leaserec.Lease {
		return leaserec.Lease{LeaseID: id, SessionID: "s-" + id, Role: own("author"), Phase: own("implementing"),
			Status: leaserec.Status(own("active")), StatusRaw: own("active"),
			TaskClass: leaserec.TaskClass(own("author_issue_work")), OwnerPID: 1, OwnerHost: own("h1"),
			Work: leaserec.WorkRef{Remote: own("origin"), Org: own("acme"), Repo: own("widgets"),
				Kind: leaserec.WorkKind(own("issue")), Number: 1}}
	}
	session := func(id string) leaserec.Session {
		return leaserec.Session{SessionID: id, Role: own("author"), Profile: own("p"), Host: own("h1"),
			Status: own("active"), PID: 1}
	}
	p := Probe{Host: "h1", Liveness: func(int, string) leaserec.ProcessState { return leaserec.ProcessAlive },
		Worktree: func(string, string) leases.WorktreeReport { return leases.WorktreeReport{} }}
	a, b := p.ObserveLease(lease("1")), p.ObserveLease(lease("2"))
	sa, sb := p.ObserveSession(session("s1")), p.ObserveSession(session("s2"))
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two copies", what, x, y)
		}
	}
	same("lease role", a.Lease.Role, b.Lease.Role)
	same("lease phase", a.Lease.Phase, b.Lease.Phase)
	same("lease status", string(a.Lease.Status), string(b.Lease.Status))
	same("lease status as written", a.Lease.StatusRaw, b.Lease.StatusRaw)
	same("lease task class", string(a.Lease.TaskClass), string(b.Lease.TaskClass))
	same("lease owner host", a.Lease.OwnerHost, b.Lease.OwnerHost)
	same("lease host judged on", a.Host, b.Host)
	same("remote", a.Lease.Work.Remote, b.Lease.Work.Remote)
	same("org", a.Lease.Work.Org, b.Lease.Work.Org)
	same("repo", a.Lease.Work.Repo, b.Lease.Work.Repo)
	same("kind", string(a.Lease.Work.Kind), string(b.Lease.Work.Kind))
	same("session role", sa.Session.Role, sb.Session.Role)
	same("session role and lease role", sa.Session.Role, a.Lease.Role)
	same("session profile", sa.Session.Profile, sb.Session.Profile)
	same("session host", sa.Session.Host, sb.Session.Host)
	same("session status", sa.Session.Status, sb.Session.Status)
	if a.Lease.LeaseID == b.Lease.LeaseID || sa.Session.SessionID == sb.Session.SessionID {
		t.Error("the rows' own values were mixed up")
	}
	if a.Owner != model.LivenessAlive || sa.Owner != model.LivenessAlive {
		t.Errorf("owners %s, %s: want alive", a.Owner, sa.Owner)
	}
}
