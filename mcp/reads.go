package mcp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/alloc"
	"steward/gitea"
	"steward/gitea/gitearec"
	"steward/govern"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks"
	"steward/locks/lockrec"
	"steward/reponame"
	"steward/termsafe"
)

// readers are the read-only tools' handles on the sources, through their read APIs.
type readers struct {
	ws govern.Workspace
	mu sync.Mutex
	r  leases.Reader
}

func (rd *readers) reader() (leases.Reader, error) {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.r != nil {
		return rd.r, nil
	}
	r, err := leases.OpenReader(rd.ws.DBTarget())
	if err != nil {
		return nil, err
	}
	rd.r = r
	return r, nil
}

// drop closes the reader so the next read re-opens it (the DB may have been replaced).
func (rd *readers) drop() {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.r != nil {
		rd.r.Close()
		rd.r = nil
	}
}

func (rd *readers) close() error {
	rd.drop()
	return nil
}

// activeLeases reads every non-terminal lease; an unreadable leases table is an error, never
// an empty list.
func (rd *readers) activeLeases(ctx context.Context) ([]leaserec.Lease, error) {
	r, err := rd.reader()
	if err != nil {
		return nil, err
	}
	snap, err := r.Snapshot(ctx, leases.ReadOptions{RecentTerminal: -1, RecentEnded: -1})
	if err != nil {
		rd.drop()
		return nil, err
	}
	if snap.LeasesHealth.Status == leaserec.HealthUnavailable {
		return nil, errors.New("the leases table is unreadable: " + strings.Join(snap.LeasesHealth.Reasons, "; "))
	}
	var out []leaserec.Lease
	for _, l := range snap.Leases {
		if l.Status == leaserec.StatusActive {
			out = append(out, l)
		}
	}
	return out, nil
}

func (rd *readers) sessionLeases(ctx context.Context, session string) ([]leaserec.Lease, error) {
	all, err := rd.activeLeases(ctx)
	if err != nil {
		return nil, err
	}
	var out []leaserec.Lease
	for _, l := range all {
		if l.SessionID == session {
			out = append(out, l)
		}
	}
	return out, nil
}

func (rd *readers) lease(ctx context.Context, id string) (leaserec.Lease, bool, error) {
	r, err := rd.reader()
	if err != nil {
		return leaserec.Lease{}, false, err
	}
	l, ok, err := r.LeaseByID(ctx, id)
	if err != nil {
		rd.drop()
	}
	return l, ok, err
}

func itemRefOf(w leaserec.WorkRef) *ItemRef {
	return &ItemRef{Org: w.Org, Repo: w.Repo, Number: w.Number, Remote: w.Remote}
}

func workRefOf(it ItemRef) leaserec.WorkRef {
	return leaserec.WorkRef{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Kind: leaserec.KindIssue, Number: it.Number}
}

// lockOf reads the lock file of an item.
func (rd *readers) lockOf(it ItemRef) (string, lockrec.Entry) {
	name, ok := locks.Name(lockrec.Key{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Issue: it.Number})
	if !ok {
		return "", lockrec.Entry{Missing: true}
	}
	return name, locks.ReadFile(rd.ws.LocksDir, name)
}

// proven reports whether the calling connection can prove lease l is its claim: it holds
// the lease's claim token (it claimed it, or presented the token in a call the core
// accepted), or, over stdio, the lease records this connection's worker process on this
// host — and over stdio never a lease another process on this host claimed, as the core
// refuses it. It returns the token when the connection holds it.
//
// A token the caller presents (my_leases' claim_token) proves the lease it matches, and the
// connection holds it from then on: a worker that reconnected, or lost its fence, reads it
// back with the token it kept.
func (s *Server) proven(req *sdk.CallToolRequest, l leaserec.Lease, presented string) (string, bool) {
	ownPID := l.OwnerPID > 0 && l.OwnerHost == s.host
	if s.cfg.ClientPID > 0 && ownPID && l.OwnerPID != s.cfg.ClientPID {
		return "", false // another process's claim, as the core refuses it
	}
	if presented != "" && govern.TokenMatches(l, presented) {
		s.bind.hold(req.Session, l.LeaseID, presented)
		return presented, true
	}
	if tok := s.bind.tokenOf(req.Session, l.LeaseID); tok != "" && govern.TokenMatches(l, tok) {
		return tok, true
	}
	for _, tok := range s.bind.pendingOf(req.Session) {
		if govern.TokenMatches(l, tok) {
			s.bind.hold(req.Session, l.LeaseID, tok)
			return tok, true
		}
	}
	return "", s.cfg.ClientPID > 0 && ownPID
}

func (s *Server) leaseView(req *sdk.CallToolRequest, l leaserec.Lease, session, presented string) LeaseView {
	v := LeaseView{
		LeaseID:        l.LeaseID,
		Item:           itemRefOf(l.Work),
		Status:         string(l.Status),
		SessionID:      termsafe.Line(l.SessionID),
		Role:           l.Role,
		Phase:          l.Phase,
		ExpiresAt:      l.ExpiresAt.Raw,
		HeartbeatCount: l.HeartbeatCount,
		Yours:          l.SessionID == session,
	}
	if l.ExpiresAt.OK() {
		v.ExpiresIn = l.ExpiresAt.Time.Sub(s.cfg.Now()).Round(time.Second).String()
	}
	for _, p := range l.Problems {
		v.Problems = append(v.Problems, termsafe.Line(p))
	}
	tok, proven := s.proven(req, l, presented)
	if v.Yours && !proven {
		// A session id is anyone's to name: the fence goes only to the connection that can
		// prove the claim, and the token only to the one that holds it.
		v.Note = "held by the session you named, but this connection has not proven the claim is its own: call my_leases " +
			"again with the claim_token your claim returned to be shown its fence (the token alone proves a claim; a " +
			"session id does not)"
	}
	if v.Yours && proven {
		f := &Fence{
			LeaseID:         l.LeaseID,
			ExpiresAt:       l.ExpiresAt.Raw,
			HeartbeatCount:  l.HeartbeatCount,
			LeaseGeneration: l.Generation,
			ClaimToken:      tok,
		}
		name, e := s.reads.lockOf(*v.Item)
		if n, ok := l.Provenance["lock_file"].(string); ok && locks.ValidName(n) {
			name, e = n, locks.ReadFile(s.reads.ws.LocksDir, n)
		}
		if !e.Missing && e.Unreadable == nil && e.Record.LeaseID == l.LeaseID {
			f.LockFile, f.LockGeneration, f.TaskSessionID = name, e.Record.Generation(), e.Record.TaskSessionID()
		}
		v.Fence = f
	}
	return v
}

func (s *Server) myLeases(ctx context.Context, req *sdk.CallToolRequest, a SessionArgs) MyLeases {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return MyLeases{Code: bad.Code, Message: bad.Message, Next: bad.Next}
	}
	ls, err := s.reads.sessionLeases(ctx, session)
	if err != nil {
		return MyLeases{
			Code:    govern.CodeSourceUnavailable,
			Message: termsafe.Text("the control-plane DB could not be read: " + err.Error()),
			Next:    nextFor(govern.CodeSourceUnavailable),
		}
	}
	limit := a.Limit
	switch {
	case limit == 0:
		limit = defaultPage
	case limit < 0 || limit > maxPage:
		return MyLeases{
			Code:    govern.CodeInvalidRequest,
			Message: fmt.Sprintf("limit must be 1 to %d", maxPage),
			Next:    nextFor(govern.CodeInvalidRequest),
		}
	}
	after, ok := decodeCursor(a.Cursor)
	if !ok {
		return MyLeases{
			Code:    govern.CodeInvalidRequest,
			Message: "cursor must be a next_cursor a previous page of my_leases returned",
			Next:    nextFor(govern.CodeInvalidRequest),
		}
	}
	slices.SortFunc(ls, func(x, y leaserec.Lease) int { return strings.Compare(x.LeaseID, y.LeaseID) })
	start, _ := slices.BinarySearchFunc(ls, after, func(l leaserec.Lease, id string) int {
		if l.LeaseID <= id {
			return -1
		}
		return 1
	})
	out := MyLeases{
		Success: true,
		Total:   len(ls),
		Next:    "Heartbeat each lease with its fence; release what you are done with.",
	}
	if len(ls) == 0 {
		out.Next = "You hold no lease. Claim an item (or next) to start work."
	}
	page := ls[start:min(start+limit, len(ls))]
	for _, l := range page {
		out.Leases = append(out.Leases, s.leaseView(req, l, session, a.ClaimToken))
	}
	if start+len(page) < len(ls) {
		out.NextCursor = encodeCursor(page[len(page)-1].LeaseID)
		out.Next += " More leases follow: call my_leases again with cursor set to next_cursor."
	}
	return out
}

// Paging of list results: my_leases returns defaultPage leases unless limit says otherwise,
// at most maxPage; item_status shows at most maxItemLeases leases of an item.
const (
	defaultPage   = 20
	maxPage       = 50
	maxItemLeases = 20
)

// encodeCursor names the place after a lease id; decodeCursor reads it back ("" from "").
func encodeCursor(leaseID string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("after:" + leaseID))
}

func decodeCursor(c string) (string, bool) {
	if c == "" {
		return "", true
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", false
	}
	id, ok := strings.CutPrefix(string(b), "after:")
	return id, ok && id != ""
}

// resolveItem fills an item's defaults: the configured Gitea repository and the workspace's
// remote (Config.Remote).
func (s *Server) resolveItem(it *ItemRef) (ItemRef, *Outcome) {
	if it == nil || it.Number <= 0 {
		o := refused(
			govern.CodeInvalidRequest,
			"name the item: its issue number (and org and repo unless a Gitea repository is configured)",
		)
		return ItemRef{}, &o
	}
	out := *it
	if out.Org == "" || out.Repo == "" {
		g := s.reads.ws.Gitea
		if g == nil {
			o := refused(govern.CodeInvalidRequest, "no Gitea repository is configured, so the item needs its org and repo")
			return out, &o
		}
		owner, repo := g.Repository()
		if out.Org == "" {
			out.Org = owner
		}
		if out.Repo == "" {
			out.Repo = repo
		}
	}
	if out.Remote == "" {
		out.Remote = s.cfg.Remote
	}
	// One item per repository (reponame): the spellings Gitea serves as one are written as
	// one (Widgets.git is Widgets), and a spelling it would not accept is refused here.
	org, repo, err := reponame.Canonical(out.Org, out.Repo)
	if err != nil {
		o := refused(
			govern.CodeInvalidRequest,
			err.Error()+"; nothing was done. Name the repository as Gitea does (docs/mcp.md, \"Item identity\")",
		)
		return out, &o
	}
	out.Org, out.Repo = org, repo
	if _, ok := locks.Name(lockrec.Key{Remote: out.Remote, Org: out.Org, Repo: out.Repo, Issue: out.Number}); !ok {
		o := refused(govern.CodeInvalidRequest, "the item cannot be named as a lock file (check remote, org and repo)")
		return out, &o
	}
	return out, nil
}

// ourRepo reports whether it is in the configured Gitea repository.
func (s *Server) ourRepo(it ItemRef) bool {
	g := s.reads.ws.Gitea
	if g == nil {
		return false
	}
	owner, repo := g.Repository()
	return reponame.SameRepo(it.Org, it.Repo, owner, repo)
}

func (s *Server) itemStatus(ctx context.Context, req *sdk.CallToolRequest, a ItemArgs) ItemStatus {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return ItemStatus{Code: bad.Code, Message: bad.Message, Next: bad.Next}
	}
	it, bad := s.resolveItem(a.Item)
	if bad != nil {
		return ItemStatus{Code: bad.Code, Message: bad.Message, Next: bad.Next}
	}
	out := ItemStatus{Item: &it, Gitea: "not_configured"}
	r, err := s.reads.reader()
	var active []leaserec.Lease
	if err == nil {
		active, err = r.LeasesForWorkItem(ctx, workRefOf(it))
		if err != nil {
			s.reads.drop()
		}
	}
	if err != nil {
		out.Code, out.Message, out.Next = govern.CodeSourceUnavailable, termsafe.Text(
			"the control-plane DB could not be read: "+err.Error(),
		), nextFor(
			govern.CodeSourceUnavailable,
		)
		return out
	}
	out.Success = true
	out.LeasesTotal = len(active)
	for _, l := range active[:min(len(active), maxItemLeases)] {
		out.Leases = append(out.Leases, s.leaseView(req, l, session, ""))
	}
	name, e := s.reads.lockOf(it)
	if !e.Missing {
		lv := &LockView{File: name, Readable: e.Unreadable == nil}
		if e.Unreadable != nil {
			lv.Problem = termsafe.Line(string(e.Unreadable.Reason) + ": " + e.Unreadable.Detail)
		} else {
			as := lockrec.Assess(&e.Record, s.cfg.Now())
			lv.Contract, lv.LeaseID = string(as.Contract), e.Record.LeaseID
			lv.OwnerSession = termsafe.Line(e.Record.OwnerSession)
			lv.LockGeneration, lv.ExpiresAt = e.Record.Generation(), termsafe.Line(as.Expiration.ExpiresAt)
		}
		out.Lock = lv
	}
	switch {
	case len(active) > 0:
		out.Why, out.WhyCode = "an active lease holds it (session "+termsafe.Line(
			active[0].SessionID,
		)+")", govern.CodeClaimedByOther
		if active[0].SessionID == session {
			out.WhyCode = string(leases.CodeAlreadyHeld)
		}
	case out.Lock != nil:
		out.Why, out.WhyCode = "a lock file exists for it ("+name+")", govern.CodeClaimedByOther
	}
	if g := s.giteaGate(ctx, it); g.gitea != "not_configured" {
		out.Gitea = g.gitea
		if g.issue != nil {
			out.Title, out.State = termsafe.Line(g.issue.Title), g.issue.State
			for _, l := range g.issue.Labels {
				out.Labels = append(out.Labels, termsafe.Line(l))
			}
		}
		if g.readErr != "" {
			out.Message = g.readErr
		}
		if out.Why == "" && g.code != "" {
			out.Why, out.WhyCode = g.why, g.code
		}
	}
	out.Claimable = out.Why == ""
	if out.Claimable {
		out.Next = "You may claim it."
	} else {
		out.Next = "Not claimable now: " + out.Why + ". Pick other work."
	}
	return out
}

// gate is Gitea's side of the one rule of what is claimable: item_status says it as
// claimable and why not, and claim refuses an item it does not pass with the same code and
// reason (the leases and the lock files are the core's side: it refuses a held item itself).
type gate struct {
	// gitea is ok, unavailable or not_configured (also for an item of another repository,
	// which this server's Gitea does not hold).
	gitea   string
	issue   *gitearec.Issue
	code    string // "" when Gitea lets a worker take the item
	why     string
	readErr string
}

// giteaGate reads the item from the configured Gitea and judges it by the allocation's
// gates (alloc.Gate: closed, blocked, awaiting clarification, a container, an unmet
// dependency). An item Gitea does not have, a pull request, or an unreadable Gitea does not
// pass: an unread source never makes an item claimable.
func (s *Server) giteaGate(ctx context.Context, it ItemRef) gate {
	g := s.reads.ws.Gitea
	if g == nil || !s.ourRepo(it) {
		return gate{gitea: "not_configured"}
	}
	is, err := g.GetIssue(ctx, it.Number)
	switch {
	case gitea.IsNotFound(err):
		return gate{gitea: "ok", code: govern.CodeNotFound, why: "no such issue in Gitea"}
	case err != nil:
		return gate{
			gitea:   "unavailable",
			code:    govern.CodeSourceUnavailable,
			why:     "Gitea is unavailable, so eligibility is unknown",
			readErr: termsafe.Text("Gitea could not be read: " + err.Error()),
		}
	case is.Kind == gitearec.KindPR:
		return gate{
			gitea: "ok",
			issue: &is,
			code:  govern.CodeInvalidRequest,
			why:   "it is a pull request; workers claim issues",
		}
	}
	code, why := alloc.Gate(
		alloc.Candidate{Number: it.Number, Title: is.Title, Body: is.Body, Labels: is.Labels, Open: is.State == "open"},
		s.rules(),
		s.dependencyState(ctx, is.Body),
	)
	return gate{gitea: "ok", issue: &is, code: code, why: termsafe.Line(why)}
}

// rules are the allocation's label rules for the configured Gitea.
func (s *Server) rules() alloc.Rules {
	r := alloc.Rules{Markers: gitearec.DefaultMarkerLabels, Blocked: gitearec.DefaultBlockedLabel}
	if g := s.reads.ws.Gitea; g != nil {
		r.Markers = g.MarkerLabels()
	}
	return r
}

// dependencyState reads whether each item a body depends on is open (unknown stays out of
// the map: unproven is not done).
func (s *Server) dependencyState(ctx context.Context, body string) map[int64]bool {
	open := map[int64]bool{}
	for _, d := range alloc.Dependencies(body) {
		if is, err := s.reads.ws.Gitea.GetIssue(ctx, d); err == nil {
			open[d] = is.State == "open"
		}
	}
	return open
}

// recommended is the seed's recommended_action for a contract (seed-digest-1 §2.7), in
// this server's tool names.
func recommended(c lockrec.Contract) string {
	switch c {
	case lockrec.ContractCanonical:
		return "The lock is canonical: heartbeat it with its task_session_id and proceed with the work."
	case lockrec.ContractAbsent:
		return "No durable lock exists: claim the item before writing any implementation bytes."
	}
	return "Do not begin implementation. The lock is not canonical: ask a supervisor to recover or retire it (steward " +
		"lock retire), then claim again."
}

func (s *Server) inspect(ctx context.Context, req *sdk.CallToolRequest, a InspectArgs) Contract {
	if _, bad := s.enter(ctx, req, a.SessionID); bad != nil {
		return Contract{Code: bad.Code, Message: bad.Message, Next: bad.Next, RecommendedAction: bad.Next}
	}
	it, bad := s.resolveItem(&ItemRef{Org: a.Org, Repo: a.Repo, Number: a.IssueNumber, Remote: a.Remote})
	if bad != nil {
		return Contract{Code: bad.Code, Message: bad.Message, Next: bad.Next, RecommendedAction: bad.Next}
	}
	name, e := s.reads.lockOf(it)
	out := Contract{Success: true, LockFile: name}
	if !e.Missing && e.Unreadable != nil {
		out.Success, out.Code = false, "lock_unreadable"
		out.Message = termsafe.Text(
			fmt.Sprintf(
				"lock %s cannot be read (%s: %s); an unreadable lock is never absent",
				name,
				e.Unreadable.Reason,
				e.Unreadable.Detail,
			),
		)
		out.RecommendedAction = "Do not claim or implement: ask a supervisor to inspect the lock file."
		out.Next = out.RecommendedAction
		return out
	}
	var rec *lockrec.Record
	if !e.Missing {
		rec = &e.Record
	}
	as := lockrec.Assess(rec, s.cfg.Now())
	out.Contract, out.Canonical, out.MissingFields = string(as.Contract), as.Canonical, as.MissingFields
	out.ClaimantUsername, out.ClaimantProfile = termsafe.Line(as.Claimant.Username), termsafe.Line(as.Claimant.Profile)
	out.ClaimantPlacement = string(as.ClaimantPlacement)
	out.ExpirationState, out.ExpiresAt = string(as.Expiration.State), termsafe.Line(as.Expiration.ExpiresAt)
	out.Expired = as.Expiration.Expired
	out.Heartbeatable, out.CreatePREligible = as.Heartbeatable, as.CreatePREligible
	out.LockGeneration, out.TaskSessionID = as.LockGeneration, termsafe.Line(as.TaskSessionID)
	for _, r := range as.Reasons {
		out.Reasons = append(out.Reasons, termsafe.Line(r))
	}
	if rec != nil {
		out.OwnerSession, out.LeaseID = termsafe.Line(rec.OwnerSession), rec.LeaseID
		if a.BranchName != "" && a.BranchName != rec.BranchName {
			out.BindingMismatches = append(
				out.BindingMismatches,
				fmt.Sprintf(
					"branch_name: the lock names %q, you named %q",
					termsafe.Line(rec.BranchName),
					termsafe.Line(a.BranchName),
				),
			)
		}
		if a.WorktreePath != "" && filepath.Clean(a.WorktreePath) != filepath.Clean(rec.WorktreePath) {
			out.BindingMismatches = append(
				out.BindingMismatches,
				fmt.Sprintf(
					"worktree_path: the lock names %q, you named %q",
					termsafe.Line(rec.WorktreePath),
					termsafe.Line(a.WorktreePath),
				),
			)
		}
	}
	out.RecommendedAction = recommended(as.Contract)
	if len(out.BindingMismatches) > 0 {
		out.RecommendedAction = "The lock is bound to another branch or worktree than the ones you named: do not work " +
			"under it. " + out.RecommendedAction
	}
	out.Next = out.RecommendedAction
	return out
}
