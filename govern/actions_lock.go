package govern

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/model"
)

// lockHost is the host a lock was written on: its "host" field when present. A lock
// without one is taken to be this host's, because the lock directory is per-user and
// local (seed: "per-issue lock files under one user's home"); steward's own locks record
// the host.
func lockHost(rec *lockrec.Record, self string) string {
	for _, f := range rec.Extra {
		if f.Key == "host" {
			var h string
			if json.Unmarshal(f.Value, &h) == nil && h != "" {
				return h
			}
		}
	}
	return self
}

func lockPID(rec *lockrec.Record) int64 {
	switch {
	case rec.SessionPID != nil:
		return *rec.SessionPID
	case rec.PID != nil:
		return *rec.PID
	}
	return 0
}

// retireState is the fence of a retire: the lock as read and the judgement's inputs.
type retireState struct {
	Generation    int64
	TaskSessionID string
	Inode         uint64
	Size          int64
	Owner         leaserec.ProcessState
	Expiration    lockrec.ExpirationState
	Expired       bool
	LeaseStatus   string
	// Backing are the non-terminal leases the lock joins to (past expiry, owners not alive).
	Backing []leases.Fence
}

// retireLock archives a dead or expired lock with a recovery block.
type retireLock struct{}

func (retireLock) spec() Spec {
	return Spec{
		ID:       actionid.RetireLock,
		Title:    "Retire a dead or expired lock (archive it with a recovery block)",
		MinRole:  RoleOperator,
		Tier:     TierDestructive,
		Undoable: true,
	}
}

func (retireLock) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	return c.retirePlan(ctx, req, nil)
}

// retirePlan plans a retire. Leases in ending end in an earlier step of the same recover
// plan: they do not count as backing the lock (their own step's guards judge them).
func (c *Core) retirePlan(ctx context.Context, req Request, ending map[string]bool) (*plan, error) {
	name := req.Target.LockFile
	if !locks.ValidName(name) {
		return &plan{
			refusal: refuse(
				CodePathOutside,
				fmt.Sprintf(
					"%q is not a plain lock file name inside the locks directory; steward acts on nothing outside it",
					name,
				),
			),
		}, nil
	}
	e := locks.ReadFile(c.ws.LocksDir, name)
	switch {
	case e.Missing:
		return &plan{
			refusal: refuse(CodeNotFound, "no lock file "+name+"; it may have been released or retired already — refresh"),
		}, nil
	case e.Unreadable != nil:
		return &plan{
			refusal: refuse(
				codeInspectOnly,
				fmt.Sprintf(
					"lock file %s is unreadable (%s: %s); without a readable record there is no fence, so steward will not move "+
						"it. Inspect the file and repair or remove it by hand.",
					name,
					e.Unreadable.Reason,
					e.Unreadable.Detail,
				),
			),
		}, nil
	}
	rec := &e.Record
	// The lock's expiry is judged at the clock the leases are (the DB's on PostgreSQL).
	now := c.leaseNow(ctx)
	a := lockrec.Assess(rec, now)
	pid := lockPID(rec)
	host := lockHost(rec, c.ws.host())
	owner := leaserec.ProcessUnknown
	if pid > 0 {
		owner = c.liveness(pid, host)
	}
	st := retireState{Generation: rec.Generation(), TaskSessionID: rec.TaskSessionID(), Inode: e.Inode, Size: e.Size,
		Owner: owner, Expiration: a.Expiration.State, Expired: a.Expiration.Expired != nil && *a.Expiration.Expired}
	p := &plan{state: &st}
	p.evidence = []string{
		fmt.Sprintf(
			"lock %s: contract %s, lock_generation %d, task_session_id %q",
			name,
			a.Contract,
			st.Generation,
			st.TaskSessionID,
		),
		fmt.Sprintf("expiration %s %s", a.Expiration.State, a.Expiration.ExpiresAt),
		fmt.Sprintf("owner pid %d on host %q: %s", pid, host, owner),
	}
	// A lock backed by a live lease in the DB is not dead, whatever its file says. "Backed"
	// is the live model's join (what the screen shows as one claim is one to the core): the
	// item's non-terminal leases (its
	// identity, org and repo in any case), each joined to the lock as the screen joins them
	// — the lock names the lease, or names none and the lease's session owns it — and a
	// lock that names neither a lease nor a session may be any of them. The lease the lock
	// names is read by id as well (it may sit on another item).
	if r := c.backingLeases(ctx, rec, &st, p, ending); r != nil || p.refusal != nil {
		if r != nil {
			return p, r
		}
		return p, nil
	}
	switch {
	case st.Expired && owner == leaserec.ProcessAlive:
		p.refusal = refuse(
			codeInspectOnly,
			"expired-lock-live-owner: the lock expired but its owner process "+fmt.Sprint(
				pid,
			)+" is alive and may heartbeat again; inspect only. Ask the owner to release or re-lock, or wait until the "+
				"process ends.",
		)
	case st.Expired:
		p.evidence = append(
			p.evidence,
			"the lock is expired; owner "+string(owner)+" (unknown never counts as dead, but an expired lock may be retired)",
		)
		if owner != leaserec.ProcessDead {
			// Expired by this host's clock: on SQLite only as far as that clock is trusted.
			p.refusal = c.clockRefusal(actionid.RetireLock, now, lockStamps(name, rec)...)
		}
	case owner == leaserec.ProcessDead:
		p.evidence = append(p.evidence, "the owner process is dead on this host")
	case a.Expiration.State != lockrec.ExpirationRecorded:
		p.refusal = refuse(
			codeInspectOnly,
			"the lock records no usable expiry ("+string(
				a.Expiration.State,
			)+") and its owner is "+string(
				owner,
			)+", not proven dead; a missing expiry is never read as expired. Recover it through the supervised system's "+
				"bootstrap recovery, or retire it once the owner is gone.",
		)
	default:
		p.refusal = refuse(
			codeFreshForeignLease,
			"the lock is live until "+a.Expiration.ExpiresAt+" and its owner is "+string(
				owner,
			)+"; a live lock is never retired. Wait for expiry.",
		)
	}
	p.confirm = "retire " + name
	if k, ok := rec.Key(); ok {
		p.confirm = fmt.Sprintf("retire %s/%s#%d", k.Org, k.Repo, k.Issue)
	}
	p.effects = []string{
		"lock file " + name + " moves to retired/ with a steward_recovery block (action, attempt, actor, reason, " +
			"evidence); it is never deleted",
		"no live lock remains for this item in the lock directory",
		retireUndoEffect,
	}
	p.fences = []string{
		fmt.Sprintf(
			"lock_generation %d and task_session_id %q unchanged (compare-and-swap under flock)",
			st.Generation,
			st.TaskSessionID,
		),
	}
	return p, nil
}

// retireUndoEffect is the retire's word on its inverse (lock.restore of the archive).
const retireUndoEffect = "undo restores it while nothing has claimed the item since"

func (retireLock) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(*retireState)
	ev, _ := json.Marshal(p.evidence)
	archived, err := c.lockWriter(ctx).
		Archive(c.ws.LocksDir, req.Target.LockFile, locks.ExpectFence(st.Generation, st.TaskSessionID), lockrec.RecoveryBlock{
			Action: "retire", ActionID: actionid.RetireLock, AuditAttemptID: attempt, Actor: lockActor(c.actor),
			Reason: "retired by steward: dead or expired lock", Evidence: ev,
		})
	if r := lockRefusal(err); r != nil {
		if archived != "" {
			// The archive written before the lock moved could not be removed again: say so, not
			// "nothing was changed".
			r.Message = Cap(
				"the lock file changed while it was being archived (its owner rewrote it); the owner's write was kept, " +
					"but the archive written meanwhile could not be removed and stays as " + archived + ", holding a " +
					"lock_generation that was never retired — remove it by hand (" + err.Error() + "); preview again",
			)
		}
		return effect{refusal: r}
	}
	if err != nil {
		return effect{sent: true, err: err}
	}
	return effect{
		effects: []string{"archived " + req.Target.LockFile + " as " + archived},
		inverse: &Request{Action: actionid.RestoreLock, Target: Target{LockFile: archived}},
		detail:  map[string]string{"archived": archived},
	}
}

// backingLeases runs the retire guard over the leases that back the lock rec: it records
// them in st and the evidence, and sets p.refusal when one of them is live — active and
// not past its expiry (a missing or unparseable expiry is never past), or past it while
// its owner process is alive. The DB must be readable: an unreadable DB never counts as a
// lock nobody holds.
func (c *Core) backingLeases(
	ctx context.Context,
	rec *lockrec.Record,
	st *retireState,
	p *plan,
	ending map[string]bool,
) error {
	r, err := c.reader()
	if err != nil {
		p.refusal = refuse(
			CodeSourceUnavailable,
			"the control-plane DB cannot be read ("+err.Error()+"), so steward cannot prove no live lease backs this lock; "+
				"an unreadable DB never counts as a free item. Retry when the DB is readable.",
		)
		return nil
	}
	var cands []leaserec.Lease
	if k, ok := rec.Key(); ok {
		ls, err := r.LeasesForWorkItem(
			ctx,
			leaserec.WorkRef{Remote: k.Remote, Org: k.Org, Repo: k.Repo, Kind: leaserec.KindIssue, Number: k.Issue},
		)
		if err != nil {
			c.dropHandles()
			return err
		}
		cands = ls
	}
	if rec.LeaseID != "" {
		l, found, err := r.LeaseByID(ctx, rec.LeaseID)
		if err != nil {
			c.dropHandles()
			return err
		}
		switch {
		case !found:
			st.LeaseStatus = "absent"
			p.evidence = append(p.evidence, "lease "+rec.LeaseID+" is not in the DB")
		default:
			st.LeaseStatus = string(l.Status)
			if !slices.ContainsFunc(cands, func(x leaserec.Lease) bool { return x.LeaseID == l.LeaseID }) {
				cands = append(cands, l)
			}
		}
	}
	now := c.leaseNow(ctx)
	for i := range cands {
		l := &cands[i]
		join := model.JoinOf(rec, l)
		if join == model.JoinNone && !(rec.LeaseID == "" && rec.OwnerSession == "") {
			continue // a lock of another claim: the screen shows them apart
		}
		how := map[model.Join]string{model.JoinByLeaseID: "the lock names it", model.JoinBySession: "the lock names no " +
			"lease and its owner session " + l.SessionID + " holds it", model.JoinNone: "the lock names neither a lease nor " +
			"a session, so it may be this lease's"}[join]
		p.evidence = append(
			p.evidence,
			fmt.Sprintf("lease %s (%s) is %s, expires_at %s", l.LeaseID, how, l.Status, l.ExpiresAt.Raw),
		)
		if l.Status.Terminal() {
			continue
		}
		if ending[l.LeaseID] {
			p.evidence = append(p.evidence, "lease "+l.LeaseID+" ends in an earlier step of this plan; the retire runs after it")
			continue
		}
		st.Backing = append(st.Backing, leases.FenceOf(*l))
		owner := leaserec.ProcessUnknown
		if l.OwnerPID > 0 {
			owner = c.liveness(l.OwnerPID, l.OwnerHost)
		}
		past := l.ExpiresAt.OK() && !l.ExpiresAt.Time.After(now)
		switch {
		case !past:
			p.refusal = refuse(
				codeFreshForeignLease,
				"the lock is backed by lease "+l.LeaseID+" ("+how+"), active until "+l.ExpiresAt.Raw+"; a live claim is never "+
					"retired, whatever the lock file's own pid says. Wait for it to expire, or abandon the lease with proof first.",
			)
			return nil
		case owner == leaserec.ProcessAlive:
			p.refusal = refuse(
				codeInspectOnly,
				fmt.Sprintf(
					"the lock is backed by lease %s (%s), past its expiry, whose owner process %d is alive and may heartbeat "+
						"again; inspect only. Reclaim the lease first (lease.reclaim-expired) if the claim is over.",
					l.LeaseID,
					how,
					l.OwnerPID,
				),
			)
			return nil
		}
	}
	return nil
}

// lockRefusal maps the lock writer's fence errors to refusals; nil for other errors.
func lockRefusal(err error) *Refusal {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, locks.ErrFenceMoved):
		return refuse(
			CodeFenceMoved,
			"the lock file changed since the preview (lock_generation or task_session_id moved, or its owner rewrote it "+
				"while it was being archived — the owner's write was kept); nothing was changed — preview again",
		)
	case errors.Is(err, locks.ErrNotFound):
		return refuse(codeAlreadyReleased, "the lock file is gone (released or retired meanwhile); nothing to do")
	case errors.Is(err, locks.ErrExists):
		return refuse(codeClaimedSince, "a live lock for this item exists now; nothing was changed")
	case errors.Is(err, locks.ErrInvalidName), errors.Is(err, locks.ErrNotRegular):
		return refuse(CodePathOutside, "the lock path is not a plain file inside the locks directory; nothing was changed")
	case errors.Is(err, locks.ErrUnreadable):
		return refuse(codeInspectOnly, "the current lock file is unreadable, so it cannot be fenced; nothing was changed")
	}
	return nil
}

func (retireLock) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	dir := filepath.Join(c.ws.LocksDir, "retired")
	ents, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		return "", []string{"retired/ unreadable: " + err.Error()}, false
	}
	base := strings.TrimSuffix(intent.Target.LockFile, ".json")
	for _, d := range ents {
		if !strings.HasPrefix(d.Name(), base+".") {
			continue
		}
		e := locks.ReadFile(c.ws.LocksDir, "retired/"+d.Name())
		if b, ok := e.Record.Recovery(); ok && b.AuditAttemptID == intent.Attempt {
			live := locks.ReadFile(c.ws.LocksDir, intent.Target.LockFile)
			if live.Missing {
				return ResultSucceeded, []string{
					"archived as retired/" + d.Name() + " with this attempt's recovery block; the live file is gone",
				}, true
			}
			return "", []string{
				"archived as retired/" + d.Name() + " but the live file is still there (the crash fell between the two steps); " +
					"retire it again",
			}, false
		}
	}
	return ResultFailed, []string{"no archive carries this attempt's recovery block; the lock was not retired by it"}, true
}

// restoreLock puts an archived lock back: the inverse of a retire.
type restoreLock struct{}

func (restoreLock) spec() Spec {
	return Spec{
		ID:      actionid.RestoreLock,
		Title:   "Restore an archived lock (only if nothing claimed the item since)",
		MinRole: RoleOperator,
		Tier:    TierPrivileged,
	}
}

type restoreState struct {
	Archived     string
	LiveExists   bool
	ActiveLeases int
}

func (restoreLock) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	file := strings.TrimPrefix(req.Target.LockFile, "retired/")
	if !locks.ValidName(file) {
		return &plan{
			refusal: refuse(
				CodePathOutside,
				fmt.Sprintf(
					"%q is not a plain archived lock name; steward acts on nothing outside the locks directory",
					req.Target.LockFile,
				),
			),
		}, nil
	}
	e := locks.ReadFile(c.ws.LocksDir, "retired/"+file)
	switch {
	case e.Missing:
		return &plan{refusal: refuse(CodeNotFound, "no archived lock retired/"+file)}, nil
	case e.Unreadable != nil || !e.HasKey:
		return &plan{
			refusal: refuse(
				codeInspectOnly,
				"the archived lock retired/"+file+" is unreadable or has no issue number; it cannot be restored",
			),
		}, nil
	}
	st := restoreState{Archived: "retired/" + file}
	p := &plan{state: st}
	snap, err := locks.LoadDir(c.ws.LocksDir, locks.LoadOptions{})
	if err != nil {
		return p, err
	}
	for _, o := range snap.Live {
		if o.HasKey && o.Unreadable == nil && lockrec.SameItem(o.Key, e.Key) {
			st.LiveExists = true
		}
	}
	ref := leaserec.WorkRef{
		Remote: e.Key.Remote,
		Org:    e.Key.Org,
		Repo:   e.Key.Repo,
		Kind:   leaserec.KindIssue,
		Number: e.Key.Issue,
	}
	r, err := c.reader()
	if err != nil {
		p.refusal = refuse(
			CodeSourceUnavailable,
			"the control-plane DB cannot be read ("+err.Error()+"), so steward cannot prove nothing claimed the item since; "+
				"retry when it is readable",
		)
		return p, nil
	}
	active, err := r.LeasesForWorkItem(ctx, ref)
	if err != nil {
		c.dropHandles()
		return p, err
	}
	for _, l := range active {
		if l.Status == leaserec.StatusActive && l.LeaseID != e.Record.LeaseID {
			st.ActiveLeases++
		}
	}
	p.state = st
	if st.LiveExists || st.ActiveLeases > 0 {
		p.refusal = refuse(
			codeClaimedSince,
			fmt.Sprintf(
				"the item was claimed since the lock was retired (%d live lock files, %d other active leases); restoring would "+
					"create a second owner. Leave it retired.",
				b2i(st.LiveExists),
				st.ActiveLeases,
			),
		)
	}
	p.effects = []string{
		"retired/" + file + " is written back as the live lock (lock_generation advanced, steward_recovery removed); the " +
			"archive stays as history",
	}
	p.fences = []string{
		"no live lock for the item and no other active lease on it (re-checked under flock before writing)",
	}
	p.evidence = []string{
		fmt.Sprintf("archived lock for %s/%s#%d, generation %d", e.Key.Org, e.Key.Repo, e.Key.Issue, e.Record.Generation()),
	}
	return p, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (restoreLock) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(restoreState)
	live, gen, err := c.lockWriter(ctx).Restore(c.ws.LocksDir, st.Archived)
	if r := lockRefusal(err); r != nil {
		return effect{refusal: r}
	}
	if err != nil {
		return effect{sent: true, err: err}
	}
	return effect{effects: []string{fmt.Sprintf("restored %s as %s (lock_generation %d)", st.Archived, live, gen)}}
}

// verify settles a restore by comparing the live lock with the archive: a restore writes
// the archived record back with the same task_session_id at a later generation. A live lock
// of that task session past the archived generation — or, if it was retired again since,
// an archive of it — proves the restore happened; otherwise it did not.
func (restoreLock) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	file := strings.TrimPrefix(intent.Target.LockFile, "retired/")
	a := locks.ReadFile(c.ws.LocksDir, "retired/"+file)
	if !locks.ValidName(file) || a.Missing || a.Unreadable != nil {
		return "", []string{"the archive retired/" + file + " cannot be read"}, false
	}
	tsid, gen := a.Record.TaskSessionID(), a.Record.Generation()
	if tsid == "" {
		return "", []string{
			"the archive records no task_session_id to compare the live lock with; compare them and resolve by hand",
		}, false
	}
	live := file
	if b, ok := a.Record.Recovery(); ok && locks.ValidName(b.LiveName) {
		live = b.LiveName
	} else if n, ok := locks.Name(a.Key); ok {
		live = n
	}
	restored := func(e lockrec.Entry) bool {
		return e.Unreadable == nil && e.Record.TaskSessionID() == tsid && e.Record.Generation() > gen
	}
	if e := locks.ReadFile(c.ws.LocksDir, live); !e.Missing && restored(e) {
		return ResultSucceeded, []string{
			fmt.Sprintf(
				"live lock %s holds task_session_id %s at lock_generation %d (the archive is at %d): restored",
				live,
				tsid,
				e.Record.Generation(),
				gen,
			),
		}, true
	}
	again := ""
	_ = eachArchive(c.ws.LocksDir, live, func(e lockrec.Entry) bool {
		if restored(e) {
			again = e.Name
		}
		return again != ""
	})
	if again != "" {
		return ResultSucceeded, []string{
			"the restored lock (task_session_id " + tsid + ", a later generation) was archived again since as retired/" + again,
		}, true
	}
	return ResultFailed, []string{
		fmt.Sprintf(
			"no live or archived lock %s holds task_session_id %s past lock_generation %d: the archive was not restored",
			live,
			tsid,
			gen,
		),
	}, true
}

// lockStamps are the times a lock records that a clock wrote.
func lockStamps(name string, rec *lockrec.Record) []stamped {
	wl := rec.WorkLease
	if wl == nil {
		return nil
	}
	var out []stamped
	if wl.CreatedAt.Valid {
		out = append(out, stamped{"lock " + name + "'s work_lease.created_at", wl.CreatedAt.Time})
	}
	if wl.LastHeartbeatAt.Valid {
		out = append(out, stamped{"lock " + name + "'s work_lease.last_heartbeat_at", wl.LastHeartbeatAt.Time})
	}
	return out
}
