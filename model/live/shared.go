package live

import (
	"unique"

	"steward/leases/leaserec"
)

// The live model holds every lease, session and lock of the fleet for its whole life, and
// most of their text repeats across thousands of rows: the remote, org and repo, a role, a
// phase, a status, a host. Each such value is kept once (unique.Make), not once per row;
// values that are a row's own (ids, paths, times) are left as read.

// shared returns the one copy of s.
func shared(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

// sharedWork is w with its repeated values shared.
func sharedWork(w leaserec.WorkRef) leaserec.WorkRef {
	w.Remote, w.Org, w.Repo = shared(w.Remote), shared(w.Org), shared(w.Repo)
	w.Kind = leaserec.WorkKind(shared(string(w.Kind)))
	return w
}

// sharedLease is l with its repeated values shared.
func sharedLease(l leaserec.Lease) leaserec.Lease {
	l.Role, l.Phase, l.StatusRaw = shared(l.Role), shared(l.Phase), shared(l.StatusRaw)
	l.TaskClass, l.Status = leaserec.TaskClass(shared(string(l.TaskClass))), leaserec.Status(shared(string(l.Status)))
	l.OwnerHost, l.EndReason = shared(l.OwnerHost), shared(l.EndReason)
	l.Work = sharedWork(l.Work)
	return l
}

// sharedSession is s with its repeated values shared.
func sharedSession(s leaserec.Session) leaserec.Session {
	s.Role, s.Profile, s.Host, s.Status = shared(s.Role), shared(s.Profile), shared(s.Host), shared(s.Status)
	s.ControllerInstanceID = shared(s.ControllerInstanceID)
	return s
}

// sharedWorkItem is w with its repeated values shared.
func sharedWorkItem(w leaserec.WorkItem) leaserec.WorkItem {
	w.WorkRef, w.State = sharedWork(w.WorkRef), shared(w.State)
	return w
}
