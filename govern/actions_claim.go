package govern

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/reponame"
)

// The provenance the supervised system's lock writer stamps; steward writes as the
// sanctioned gitea_lock_issue source, marking itself in written_by_tool.
const (
	lockSource   = "gitea_lock_issue"
	lockTool     = "steward"
	lifecycleV1  = "heartbeat-v1"
	attemptKey   = "steward_attempt"
	taskSessKey  = "task_session_id"
	lockFileKey  = "lock_file"
	defaultRemot = "origin"
)

// taskClass maps a worker's task role to the lease policy's task class.
func taskClass(role string) (leaserec.TaskClass, string, bool) {
	switch role {
	case "", "author":
		return "author_issue_work", "author", true
	case "reviewer":
		return "reviewer_pr", "reviewer", true
	case "merger":
		return "merger_pr", "merger", true
	case "conflict-fix", "conflict_fix":
		return "conflict_fix", "conflict-fix", true
	}
	return "", role, false
}

// checkClaimNumbers refuses a pid or TTL that does not parse, in the preview already: an
// unparsable pid was read as "no pid" and an unparsable TTL refused only on apply.
func checkClaimNumbers(p ClaimParams) *Refusal {
	if v := p.PID; v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 || n > math.MaxInt32 {
			return refuse(
				CodeInvalidRequest,
				fmt.Sprintf("pid %q is not a process id: give a whole number from 1 to %d, or none", Cap(v), math.MaxInt32),
			)
		}
	}
	if v := p.TTL; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			return refuse(
				CodeInvalidRequest,
				fmt.Sprintf("ttl %q is not a positive duration: give a number with a unit, such as 90s, 10m or 1h30m", Cap(v)),
			)
		}
	}
	return nil
}

// claimItem is the item a claim creates its lease and lock under: the default remote, and
// the owner and repository in their canonical spelling (reponame: widgets.git is widgets,
// the case as given, compared folded). A spelling Gitea would not accept (a path, full-width
// letters, a reserved name) is refused: it names no repository, and a claim under it would
// be a second lease for an item under a name nobody else uses. The core is the last line;
// the command line and the MCP tools refuse or canonicalise before they ask.
func claimItem(it Item) (Item, *Refusal) {
	if it.Remote == "" {
		it.Remote = defaultRemot
	}
	org, repo, err := reponame.Canonical(it.Org, it.Repo)
	if err != nil {
		return it, refuse(
			CodeInvalidRequest,
			Cap(err.Error())+". Nothing was claimed: name the repository as Gitea does (docs/mcp.md, item identity)",
		)
	}
	it.Org, it.Repo = org, repo
	return it, nil
}

func mintTaskSession() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "tsk-author-" + hex.EncodeToString(b[:])
}

// claimState is the fence of a claim: the item's active leases and every live lock of the
// item (whatever its file name or the case of its org and repo).
type claimState struct {
	Active []leases.Fence
	Locks  []lockFence
}

// lockFence is one live lock as a fence: its name, generation and task session.
type lockFence struct {
	Name       string
	Generation int64
	TSK        string
}

type claimAction struct{}

func (claimAction) spec() Spec {
	return Spec{
		ID:      actionid.Claim,
		Title:   "Claim an item for a worker session (lease + lock)",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
		Worker:  true,
	}
}

func (claimAction) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	given := req.Target.Item
	if given == nil || given.Number <= 0 || given.Org == "" || given.Repo == "" || req.Target.Session == "" {
		return &plan{
			refusal: refuse(
				CodeInvalidRequest,
				"a claim names the item (org, repo, number) and the worker's session; give --org, --repo, --number and --session",
			),
		}, nil
	}
	it, bad := claimItem(*given)
	if bad != nil {
		return &plan{refusal: bad}, nil
	}
	cp := paramsFor[ClaimParams](req)
	if _, _, ok := taskClass(cp.Role); !ok {
		return &plan{
			refusal: refuse(
				CodeInvalidRequest,
				"unknown task role "+strconv.Quote(cp.Role)+"; use author, reviewer, merger or conflict-fix",
			),
		}, nil
	}
	if r := checkClaimNumbers(cp); r != nil {
		return &plan{refusal: r}, nil
	}
	if r := c.checkClaimPaths(cp); r != nil {
		return &plan{refusal: r}, nil
	}
	if tok := cp.ClaimToken; tok != "" && !ValidClaimToken(tok) {
		return &plan{
			refusal: refuse(
				CodeInvalidRequest,
				"claim_token is not a claim token ("+claimTokenPrefix+" and 43 characters of base64url, from "+
					"govern.NewClaimToken); nothing was changed",
			),
		}, nil
	}
	ref := workRef(it)
	name, ok := locks.Name(lockKey(ref))
	if !ok {
		return &plan{refusal: refuse(CodeInvalidRequest, "the item cannot be named as a lock file")}, nil
	}
	r, err := c.reader()
	if err != nil {
		return &plan{
			refusal: refuse(
				CodeSourceUnavailable,
				"the control-plane DB cannot be read ("+err.Error()+"); an unreadable DB never means the item is free. Retry "+
					"later.",
			),
		}, nil
	}
	if sr, err := c.schemaRefusal(ctx, leases.OpClaim); err != nil || sr != nil {
		return &plan{refusal: sr}, err
	}
	if cp.ClaimToken != "" {
		// The token's hash is kept with the lease row; a DB whose leases record no
		// provenance cannot bind the claim to it, and a claim nobody could prove later is
		// not made.
		if has, err := r.HasColumn(ctx, "leases", "provenance_json"); err != nil {
			c.dropHandles()
			return &plan{}, err
		} else if !has {
			return &plan{refusal: refuse(string(leases.CodeSchemaUnsupported), "the control-plane DB's leases have no "+
				"provenance_json column, where a claim keeps the hash of its claim token; without it no later call could prove "+
				"the claim is its own, so nothing was claimed. Ask steward's operator")}, nil
		}
	}
	active, err := r.LeasesForWorkItem(ctx, ref)
	if err != nil {
		c.dropHandles()
		return &plan{}, err
	}
	now := c.leaseNow(ctx)
	st := claimState{}
	for _, l := range active {
		st.Active = append(st.Active, leases.FenceOf(l))
	}
	p := &plan{state: st}
	v, holder, past := leases.CheckClaim(active, req.Target.Session, now)
	if !v.OK {
		p.refusal = verdict(v)
		p.recordRefusal = v.Code == leases.CodeClaimedByOtherSession
		p.evidence = append(
			p.evidence,
			fmt.Sprintf("held by lease %s of session %s (past expiry: %v)", holder.LeaseID, holder.SessionID, past),
		)
	}
	// Every live lock of the item counts, under any file name and in any case of the org and
	// repo: the claim must not create the duplicate it would report.
	held, err := c.lockIndex().Lookup(lockKey(ref))
	if err != nil {
		return &plan{
			refusal: refuse(
				CodeSourceUnavailable,
				"the locks directory cannot be read ("+err.Error()+"); an unreadable directory never means the item is free. "+
					"Retry later.",
			),
		}, nil
	}
	for _, e := range held {
		st.Locks = append(st.Locks, lockFence{Name: e.Name, Generation: e.Record.Generation(), TSK: e.Record.TaskSessionID()})
		what := "owner session " + strconv.Quote(e.Record.OwnerSession)
		if e.Unreadable != nil {
			what = "unreadable: " + string(e.Unreadable.Reason)
		}
		p.evidence = append(p.evidence, "live lock "+e.Name+" for this item ("+what+")")
		if p.refusal == nil {
			p.refusal = refuse(
				CodeClaimedByOther,
				"a lock file for this item already exists ("+e.Name+", "+what+"); pick other work, or have the stale lock "+
					"retired first",
			)
		}
	}
	if err := c.claimUnderGitSpelling(ctx, r, ref, &st, p); err != nil {
		return &plan{}, err
	}
	p.state = st
	p.effects = []string{
		"a lease on " + it.String() + " for session " + req.Target.Session + " (assign-and-lease in one BEGIN IMMEDIATE " +
			"transaction)",
		"lock file " + name + " written: a canonical #953 record with a fresh task_session_id, lock_generation 1",
	}
	p.fences = []string{
		"no active lease on the item (checked inside the transaction)",
		"no lock file for the item, under any name (" + name + " created only if absent, under flock, after checking the " +
			"others again)",
	}
	return p, nil
}

func (claimAction) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	it, bad := claimItem(*req.Target.Item)
	if bad != nil {
		return effect{refusal: bad}
	}
	ref := workRef(it)
	cp := paramsFor[ClaimParams](req)
	class, role, _ := taskClass(cp.Role)
	pid, _ := strconv.ParseInt(cp.PID, 10, 64)
	var ttl time.Duration
	if s := cp.TTL; s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			return effect{refusal: refuse(CodeInvalidRequest, "--ttl must be a Go duration such as 10m: "+err.Error())}
		}
		ttl = d
	}
	branch := cp.Branch
	if branch == "" {
		branch = fmt.Sprintf("feat/issue-%d", it.Number)
	}
	worktree := cp.Worktree
	if worktree == "" {
		worktree = filepath.Join(c.branchesRoot(), filepath.Base(branch))
	}
	tsid := mintTaskSession()
	name, _ := locks.Name(lockKey(ref))
	host := c.ws.host()
	s, err := c.store()
	if err != nil {
		return effect{err: err}
	}
	o, err := s.Claim(ctx, leases.ClaimRequest{
		Session: leases.SessionInfo{
			SessionID: req.Target.Session,
			Role:      role,
			Profile:   cp.Profile,
			PID:       pid,
			Host:      host,
		},
		Work:         ref,
		Title:        cp.Title,
		Role:         role,
		TaskClass:    class,
		TTL:          ttl,
		WorktreePath: worktree,
		OwnerPID:     pid,
		OwnerHost:    host,
		Provenance:   claimProvenance(attempt, tsid, name, cp.ClaimToken),
	}, c.now())
	if err != nil {
		return dbFailed(err)
	}
	if r := fromLeases(o); r != nil {
		return effect{refusal: r}
	}
	l := o.Lease
	rec := canonicalLock(it, branch, worktree, cp.Username, cp.Profile, req.Target.Session, tsid, pid, host, l)
	c.doStep("lease-committed")
	others := func() error {
		es, err := c.lockIndex().Lookup(lockKey(ref))
		if err != nil {
			return err
		}
		alt, err := c.lockIndex().Lookup(lockKey(gitSpelling(ref)))
		if err != nil {
			return err
		}
		for _, e := range append(es, alt...) {
			if e.Name != name {
				return &locks.PathError{Op: "claim", Path: e.Path, Err: locks.ErrExists}
			}
		}
		return nil
	}
	gen, err := c.lockWriter(ctx).WriteCASChecked(c.ws.LocksDir, name, locks.ExpectAbsent(), rec, others)
	if err != nil {
		return c.compensateClaim(ctx, s, l, name, err)
	}
	detail := map[string]string{
		"lease_id":         l.LeaseID,
		"task_session_id":  tsid,
		"lock_file":        name,
		"expires_at":       l.ExpiresAt.Raw,
		"lock_generation":  strconv.FormatInt(gen, 10),
		"heartbeat_count":  strconv.FormatInt(l.HeartbeatCount, 10),
		"lease_generation": strconv.FormatInt(l.Generation, 10),
	}
	if l.HasGeneration {
		// The seed's fencing counter (HA ADR #668), where the DB records one.
		detail["lease_generation_id"] = strconv.FormatInt(l.Generation, 10)
	}
	return effect{
		effects: []string{
			"lease " + l.LeaseID + " on " + it.String() + " until " + l.ExpiresAt.Raw,
			"lock " + name + " (task_session_id " + tsid + ")",
		},
		detail: detail,
	}
}

// gitSpelling is ref under the spelling a clone path gives its repository (widgets.git),
// which reponame canonicalises to ref but which an older tool or a hand may have recorded.
func gitSpelling(ref leaserec.WorkRef) leaserec.WorkRef {
	ref.Repo += ".git"
	return ref
}

// claimUnderGitSpelling finds what the DB and the locks directory already hold for the
// item under its clone-path spelling (acme/widgets.git#7 for acme/widgets#7): such a lease
// or lock is the same item, so the claim is refused and says so — never merged silently
// (the record keeps its spelling, shown as it is) and never split into a second lease.
func (c *Core) claimUnderGitSpelling(
	ctx context.Context,
	r leases.Reader,
	ref leaserec.WorkRef,
	st *claimState,
	p *plan,
) error {
	alt := gitSpelling(ref)
	active, err := r.LeasesForWorkItem(ctx, alt)
	if err != nil {
		c.dropHandles()
		return err
	}
	for _, l := range active {
		st.Active = append(st.Active, leases.FenceOf(l))
		p.evidence = append(
			p.evidence,
			fmt.Sprintf("lease %s of session %s is recorded under the spelling %s", l.LeaseID, l.SessionID, itemOf(l.Work)),
		)
		if p.refusal == nil {
			p.refusal = refuse(
				CodeClaimedByOther,
				"this item already has a lease recorded under the spelling "+itemOf(l.Work).String()+
					" (lease "+l.LeaseID+", session "+l.SessionID+"), which names the same repository; pick other work, or "+
					"recover that lease first",
			)
		}
	}
	held, err := c.lockIndex().Lookup(lockKey(alt))
	if err != nil {
		p.refusal = refuse(
			CodeSourceUnavailable,
			"the locks directory cannot be read ("+err.Error()+"); an unreadable directory never means the item is free. "+
				"Retry later.",
		)
		return nil
	}
	for _, e := range held {
		st.Locks = append(st.Locks, lockFence{Name: e.Name, Generation: e.Record.Generation(), TSK: e.Record.TaskSessionID()})
		p.evidence = append(p.evidence, "live lock "+e.Name+" for this item under the spelling "+alt.Org+"/"+alt.Repo)
		if p.refusal == nil {
			p.refusal = refuse(
				CodeClaimedByOther,
				"a lock file for this item already exists under the spelling "+alt.Org+"/"+alt.Repo+" ("+e.Name+"), which "+
					"names the same repository; pick other work, or have that lock retired first",
			)
		}
	}
	return nil
}

// claimProvenance is what a claim records in its lease's provenance: the attempt, the
// lock's task session and file, and the hash of its claim token when it has one.
func claimProvenance(attempt, tsid, lockFile, token string) map[string]any {
	p := map[string]any{attemptKey: attempt, taskSessKey: tsid, lockFileKey: lockFile}
	if token != "" {
		p[claimTokenKey] = ClaimTokenHash(token)
	}
	return p
}

// compensateClaim undoes a claim whose lock could not be written (werr): the lease must
// not outlive it, and steward knows exactly what happened, so the attempt is refused (the
// lock lost a race) or failed with both effects — never unknown — once the lease is
// released again. Only when the lock may exist after all (the write got as far as its
// rename: it names this lease now) or the release fails is the outcome unknown.
func (c *Core) compensateClaim(ctx context.Context, s leases.Store, l *leaserec.Lease, name string, werr error) effect {
	if e := locks.ReadFile(c.ws.LocksDir, name); !e.Missing && e.Unreadable == nil && e.Record.LeaseID == l.LeaseID {
		return effect{
			sent: true,
			err:  fmt.Errorf("lease %s was created and lock %s names it, but the write reported: %w", l.LeaseID, name, werr),
		}
	}
	r := lockRefusal(werr)
	reason := "lock_write_failed"
	if r != nil {
		reason = "lock_conflict"
	}
	c.doStep("claim-compensating")
	if _, rerr := s.Release(ctx, leases.FenceOf(*l), reason, c.now()); rerr != nil {
		return effect{
			sent: true,
			err: fmt.Errorf(
				"writing lock %s failed (%v) and releasing lease %s again failed too: %v; release it by hand (steward release)",
				name,
				werr,
				l.LeaseID,
				rerr,
			),
		}
	}
	if r != nil {
		return effect{
			refusal: refuse(
				CodeClaimedByOther,
				"another writer created lock "+name+" meanwhile; the new lease "+l.LeaseID+" was released again. Pick other work.",
			),
		}
	}
	return effect{compensated: true,
		err: fmt.Errorf(
			"writing lock %s failed (%v); lease %s was released again, so nothing remains of this claim — fix the locks "+
				"directory, then claim again",
			name,
			werr,
			l.LeaseID,
		),
		effects: []string{
			"lease " + l.LeaseID + " on " + itemOf(l.Work).String() + " created",
			"lock " + name + " not written: " + werr.Error(),
			"lease " + l.LeaseID + " released again (end_reason " + reason + ")",
		}}
}

// canonicalLock builds the #953 canonical lock record for a claim.
func canonicalLock(
	it Item,
	branch, worktree, user, profile, session, tsid string,
	pid int64,
	host string,
	l *leaserec.Lease,
) lockrec.Record {
	n := it.Number
	one := int64(1)
	if user == "" {
		user = session
	}
	if profile == "" {
		profile = "default"
	}
	cl := &lockrec.Claimant{Username: user, Profile: profile}
	created := lockrec.ParseTimestamp(l.CreatedAt.Raw)
	hostJSON, _ := json.Marshal(host)
	rec := lockrec.Record{
		Remote: it.Remote, Org: it.Org, Repo: it.Repo, IssueNumber: &n,
		Branch: branch, BranchName: branch, WorktreePath: worktree,
		WorkLease: &lockrec.WorkLease{
			OperationType: "author_issue_work", IssueNumber: &n, Branch: branch, WorktreePath: worktree,
			Claimant: cl, CreatedAt: created, ExpiresAt: lockrec.ParseTimestamp(l.ExpiresAt.Raw),
			LastHeartbeatAt: created, HeartbeatCount: &one, TaskSessionID: tsid, LifecycleVersion: lifecycleV1,
		},
		LockProvenance: &lockrec.Provenance{
			Source:        lockSource,
			WrittenByTool: lockTool,
			Claimant:      &lockrec.Claimant{Username: user, Profile: profile},
		},
		OwnerSession: session, LeaseID: l.LeaseID,
		Extra: []lockrec.RawField{{Key: "host", Value: hostJSON}},
	}
	if pid > 0 {
		rec.PID, rec.SessionPID = &pid, &pid
	}
	return rec
}

func (claimAction) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	if intent.Target.Item == nil {
		return "", nil, false
	}
	it := *intent.Target.Item
	if it.Remote == "" {
		it.Remote = defaultRemot
	}
	r, err := c.reader()
	if err != nil {
		return "", []string{"DB unreadable: " + err.Error()}, false
	}
	if ok, err := r.HasColumn(ctx, "leases", "provenance_json"); err != nil || !ok {
		return "", []string{
			"the DB's leases record no provenance, so no lease can carry the attempt's mark; inspect the item and resolve " +
				"by hand",
		}, false
	}
	// Every lease on the item, ended ones included: a claim that succeeded may have been
	// released, reclaimed or abandoned since, and verify must still settle it.
	hist, err := r.LeaseHistory(ctx, workRef(it))
	if err != nil {
		return "", []string{"leases unreadable: " + err.Error()}, false
	}
	for _, l := range hist {
		if fmt.Sprint(l.Provenance[attemptKey]) != intent.Attempt {
			continue
		}
		name := fmt.Sprint(l.Provenance[lockFileKey])
		if !l.Status.Terminal() {
			e := locks.ReadFile(c.ws.LocksDir, name)
			if !e.Missing && e.Record.LeaseID == l.LeaseID {
				return ResultSucceeded, []string{
					"lease " + l.LeaseID + " of this attempt is active and lock " + name + " names it",
				}, true
			}
			return "", []string{
				"lease " + l.LeaseID + " of this attempt is active but its lock file is missing: release the lease (steward " +
					"release) and claim again",
			}, false
		}
		ended := fmt.Sprintf("lease %s of this attempt is %s (end_reason %q)", l.LeaseID, l.Status, l.EndReason)
		switch {
		case l.EndReason == "lock_write_failed" || l.EndReason == "lock_conflict":
			return ResultFailed, []string{
				ended + ": the attempt released it again when its lock could not be written; nothing of the claim remains",
			}, true
		case lockEverNamed(c.ws.LocksDir, name, l.LeaseID):
			return ResultSucceeded, []string{
				ended + "; lock " + name + " named it (live or archived): the claim took effect and has ended since",
			}, true
		}
		return ResultFailed, []string{
			ended + " and no lock, live or archived, ever named it: the claim never completed and nothing of it remains",
		}, true
	}
	return ResultFailed, []string{"no lease, active or ended, carries this attempt's mark"}, true
}

// lockEverNamed reports whether the live lock name, or an archive of it under retired/,
// records leaseID.
func lockEverNamed(dir, name, leaseID string) bool {
	if !locks.ValidName(name) {
		return false
	}
	if e := locks.ReadFile(dir, name); !e.Missing && e.Unreadable == nil && e.Record.LeaseID == leaseID {
		return true
	}
	found := false
	_ = eachArchive(dir, name, func(e lockrec.Entry) bool {
		found = e.Unreadable == nil && e.Record.LeaseID == leaseID
		return found
	})
	return found
}

// eachArchive calls fn for every archive of the live lock name under retired/ until fn
// returns true.
func eachArchive(dir, name string, fn func(e lockrec.Entry) bool) error {
	ents, err := os.ReadDir(filepath.Join(dir, "retired"))
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	base := strings.TrimSuffix(name, ".json") + "."
	for _, d := range ents {
		if !strings.HasPrefix(d.Name(), base) {
			continue
		}
		if fn(locks.ReadFile(dir, "retired/"+d.Name())) {
			return nil
		}
	}
	return nil
}
