package mcp

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"steward/gitea/gitearec"
	"steward/govern"
	"steward/govern/actionid"
	"steward/termsafe"
)

// claim claims a named item, or the next runnable one by the allocation order.
func (s *Server) claim(ctx context.Context, req *sdk.CallToolRequest, a ClaimArgs) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	pid, ok := s.bind.declare(req.Session, a.PID)
	if !ok {
		return refused(
			govern.CodeInvalidRequest,
			fmt.Sprintf(
				"this connection's worker process is %d; a connection serves one worker process (omit pid, or pass %d)",
				pid,
				pid,
			),
		)
	}
	switch {
	case a.Next && a.Item != nil:
		return refused(govern.CodeInvalidRequest, "name an item or set next, not both")
	case !a.Next && a.Item == nil:
		return refused(govern.CodeInvalidRequest, "name the item to claim, or set next to claim the next runnable one")
	}
	var it ItemRef
	var title string
	var pick *picked
	if a.Next {
		var o *Outcome
		if pick, o = s.next(ctx, session, a.Exclude); o != nil {
			return *o
		}
		it, title = pick.item, pick.title
	} else {
		if it, bad = s.resolveItem(a.Item); bad != nil {
			return *bad
		}
		// One rule of what is claimable: an item item_status says is not claimable for a
		// reason of Gitea's (awaiting clarification, blocked, closed, ...) is refused here
		// with the same code and reason, before the core is asked; the leases and lock
		// files the core judges itself, with the codes item_status names.
		if g := s.giteaGate(ctx, it); g.code != "" {
			o := refused(g.code, fmt.Sprintf("%s/%s#%d is not claimable: %s", it.Org, it.Repo, it.Number, g.why))
			o.Item = &it
			return o
		}
	}
	params := govern.ClaimParams{
		Role:     a.Role,
		Profile:  a.Profile,
		Username: a.Username,
		Branch:   a.Branch,
		Worktree: a.Worktree,
		TTL:      a.TTL,
		Title:    title,
	}
	if pid > 0 {
		params.PID = strconv.FormatInt(pid, 10)
	}
	// Every claim is bound to a fresh claim token, returned to this worker alone: the proof
	// every later call on the claim must carry (docs/mcp.md, "Identity").
	token := govern.NewClaimToken()
	params.ClaimToken = token
	out, failed := s.run(ctx, session, govern.Request{Action: actionid.Claim,
		Target: govern.Target{
			Session: session,
			Item:    &govern.Item{Remote: it.Remote, Org: it.Org, Repo: it.Repo, Kind: "issue", Number: it.Number},
		},
		Params: params})
	if failed != nil {
		failed.Item = &it
		return *failed
	}
	o := outcomeOf(out)
	o.Item, o.Fence = &it, fenceOf(out.Detail)
	if pick != nil {
		o.Skipped, o.SkippedTotal = pick.skipped, pick.skippedTotal
	}
	switch {
	case o.Success && o.Fence != nil:
		o.Fence.ClaimToken = token
		s.bind.hold(req.Session, o.Fence.LeaseID, token)
	case out.Result == govern.ResultUnknown:
		// The claim may have taken effect: its token is the worker's only proof of it.
		if o.Fence == nil {
			o.Fence = &Fence{}
		}
		o.Fence.ClaimToken = token
		s.bind.holdPending(req.Session, token)
		o.Next += " If the claim took effect, my_leases (with this fence's claim_token) shows its fence."
	}
	if o.Success {
		o.HeartbeatEvery = s.cadence(a.Role)
		o.Next = "Work on " + fmt.Sprintf(
			"%s/%s#%d",
			it.Org,
			it.Repo,
			it.Number,
		) + ". Heartbeat at least every " + o.HeartbeatEvery +
			" with this fence (each heartbeat returns the next one); release when done, or ask if you need a maintainer."
	}
	return o
}

// fenceParams checks a fence argument and turns it into the core's parameters: the fence
// held and the claim token.
func (s *Server) fenceParams(req *sdk.CallToolRequest, f *Fence) (govern.OwnLeaseParams, *Outcome) {
	switch {
	case f == nil || f.LeaseID == "":
		o := refused(
			govern.CodeInvalidRequest,
			"pass the fence your claim or last heartbeat returned (fence.lease_id and fence.expires_at at least)",
		)
		return govern.OwnLeaseParams{}, &o
	case f.ExpiresAt == "":
		o := refused(
			govern.CodeInvalidRequest,
			"fence.expires_at is required: the lease's expiry as your claim or last heartbeat returned it",
		)
		return govern.OwnLeaseParams{}, &o
	case f.LockGeneration < 0 || f.LeaseGeneration < 0 || f.LockGeneration > 0 && f.TaskSessionID == "":
		o := refused(
			govern.CodeInvalidRequest,
			"fence.task_session_id is required with fence.lock_generation (both as your claim or last heartbeat returned them)",
		)
		return govern.OwnLeaseParams{}, &o
	}
	return govern.OwnLeaseParams{
		HeldFence: govern.HeldFence{ExpiresAt: f.ExpiresAt, LockGeneration: strconv.FormatInt(f.LockGeneration, 10),
			LeaseGeneration: strconv.FormatInt(f.LeaseGeneration, 10), TaskSession: f.TaskSessionID},
		OwnerProof: govern.OwnerProof{ClaimToken: f.ClaimToken},
	}, nil
}

func (s *Server) heartbeat(ctx context.Context, req *sdk.CallToolRequest, a FencedArgs) Outcome {
	return s.fenced(ctx, req, a, actionid.Heartbeat)
}

func (s *Server) release(ctx context.Context, req *sdk.CallToolRequest, a FencedArgs) Outcome {
	return s.fenced(ctx, req, a, actionid.Release)
}

func (s *Server) fenced(ctx context.Context, req *sdk.CallToolRequest, a FencedArgs, action string) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	params, bad := s.fenceParams(req, a.Fence)
	if bad != nil {
		return *bad
	}
	return s.fencedParams(ctx, req, session, a.Fence.LeaseID, params, action)
}

// fencedParams runs a heartbeat or release of lease with the given fence and claim token,
// from the connection's worker process.
func (s *Server) fencedParams(
	ctx context.Context,
	req *sdk.CallToolRequest,
	session, lease string,
	params govern.OwnLeaseParams,
	action string,
) Outcome {
	s.proof(&params.OwnerProof)
	out, failed := s.run(
		ctx,
		session,
		govern.Request{Action: action, Target: govern.Target{LeaseID: lease, Session: session}, Params: params},
	)
	if failed != nil {
		return *failed
	}
	o := outcomeOf(out)
	o.Fence = fenceOf(out.Detail)
	s.settleToken(req, o, lease, params.ClaimToken, action)
	if l, ok, err := s.reads.lease(ctx, lease); err == nil && ok {
		o.Item = itemRefOf(l.Work)
		if o.Success && action == actionid.Heartbeat {
			o.HeartbeatEvery = s.cadence(l.Role)
		}
	}
	if o.Success {
		switch action {
		case actionid.Heartbeat:
			o.Next = "Keep working; heartbeat again within " + o.HeartbeatEvery + " with this new fence."
		case actionid.Release:
			o.Next = "The claim is released. Pick your next item."
		}
	}
	return o
}

// settleToken keeps the connection's claim tokens in step with an outcome: a token the core
// accepted on a heartbeat is held by this connection (a worker that reconnected proves its
// claim once and is shown its fence again) and returned in the new fence; a claim that
// ended takes its token with it.
func (s *Server) settleToken(req *sdk.CallToolRequest, o Outcome, lease, presented, action string) {
	if !o.Success {
		return
	}
	if action != actionid.Heartbeat {
		s.bind.drop(req.Session, lease)
		return
	}
	tok := presented
	if tok == "" {
		tok = s.bind.tokenOf(req.Session, lease)
	}
	s.bind.hold(req.Session, lease, tok)
	if o.Fence != nil {
		o.Fence.ClaimToken = tok
	}
}

// clarificationID names a question: its item and the id of its hidden marker.
func clarificationID(it ItemRef, marker string) string {
	return fmt.Sprintf("%s/%s#%d/%s", it.Org, it.Repo, it.Number, marker)
}

var clarRe = regexp.MustCompile(`^([^/#\s]+)/([^/#\s]+)#([1-9][0-9]{0,18})/(ans-[0-9a-f]{16})$`)

// parseClarification reads a clarification id; its item's remote is left empty (the id
// does not carry it: the caller fills in its workspace's).
func parseClarification(id string) (ItemRef, string, bool) {
	m := clarRe.FindStringSubmatch(strings.TrimSpace(id))
	if m == nil {
		return ItemRef{}, "", false
	}
	n, err := strconv.ParseInt(m[3], 10, 64)
	if err != nil {
		return ItemRef{}, "", false
	}
	return ItemRef{Org: m[1], Repo: m[2], Number: n}, m[4], true
}

func (s *Server) ask(ctx context.Context, req *sdk.CallToolRequest, a AskArgs) Outcome {
	session, bad := s.enter(ctx, req, a.SessionID)
	if bad != nil {
		return *bad
	}
	params, bad := s.fenceParams(req, a.Fence)
	if bad != nil {
		return *bad
	}
	ask := govern.AskParams{Question: a.Question, HeldFence: params.HeldFence, OwnerProof: params.OwnerProof}
	s.proof(&ask.OwnerProof)
	out, failed := s.run(
		ctx,
		session,
		govern.Request{Action: actionid.Ask, Target: govern.Target{LeaseID: a.Fence.LeaseID, Session: session}, Params: ask},
	)
	if failed != nil {
		return *failed
	}
	o := outcomeOf(out)
	o.Fence = fenceOf(out.Detail)
	s.settleToken(req, o, a.Fence.LeaseID, params.ClaimToken, actionid.Ask)
	if l, ok, err := s.reads.lease(ctx, a.Fence.LeaseID); err == nil && ok {
		o.Item = itemRefOf(l.Work)
	}
	if id := out.Detail["clarification_id"]; id != "" && o.Item != nil {
		o.ClarificationID = clarificationID(*o.Item, id)
	}
	if o.Success {
		o.Next = "Your question is posted and the claim released. Stop work on the item; poll get_answer with " +
			"clarification_id now and then, and pick other work meanwhile."
	}
	return o
}

var hiddenMarker = regexp.MustCompile(`\n*<!-- steward:[a-z]+ id=[A-Za-z0-9._:-]*( [a-z]+=[A-Za-z0-9._:-]*)* -->\s*$`)

// getAnswer reads a clarification back by the rule the governed core posts and verifies it
// by (gitearec.Thread.FindOwnMark): only a comment whose author steward can vouch for, ending
// with steward's marker, is the question or steward's answer. The question is this server's
// own (its login asked it). The answer, bound to this question by its marker, is written by
// this server's login or by the login that removed the clarification marker after the
// question — a maintainer's steward posts the answer and removes the marker as one login, and
// it may well log in as someone else than the workers' server. Anyone can type a marker's
// text, so a comment by another login that ends with one is neither an answer nor a reply.
func (s *Server) getAnswer(ctx context.Context, req *sdk.CallToolRequest, a GetAnswerArgs) Answer {
	fail := func(code, msg string) Answer {
		return Answer{Code: code, Message: termsafe.Text(msg), Next: nextFor(code), ClarificationID: a.ClarificationID}
	}
	if _, bad := s.enter(ctx, req, a.SessionID); bad != nil {
		return fail(bad.Code, bad.Message)
	}
	it, id, ok := parseClarification(a.ClarificationID)
	if !ok {
		return fail(govern.CodeInvalidRequest, "clarification_id must be the id ask returned (org/repo#N/ans-…)")
	}
	it.Remote = s.cfg.Remote
	g := s.reads.ws.Gitea
	if g == nil {
		return fail("no_gitea", "no Gitea is configured for this steward, so no clarification can be read")
	}
	if !s.ourRepo(it) {
		return fail(govern.CodeInvalidRequest, "the clarification is not in the configured repository")
	}
	self, err := g.Self(ctx)
	if err != nil {
		return fail(
			govern.CodeSourceUnavailable,
			"steward's own Gitea login could not be read, so no comment can be proven steward's: "+err.Error(),
		)
	}
	th, err := g.Thread(ctx, it.Number)
	if err != nil {
		return fail(govern.CodeSourceUnavailable, "the item could not be read: "+err.Error())
	}
	question, _, found := th.FindOwnMark(self, "ask", id)
	if !found {
		return fail(
			govern.CodeNotFound,
			fmt.Sprintf(
				"no question with this id on %s/%s#%d (it may not have been posted: check the ask's result)",
				it.Org,
				it.Repo,
				it.Number,
			),
		)
	}
	out := Answer{
		Success:         true,
		ClarificationID: a.ClarificationID,
		Item:            &it,
		Question:        clipTo(termsafe.Text(hiddenMarker.ReplaceAllString(question.Body, "")), maxText),
	}
	for _, m := range g.MarkerLabels() {
		if th.Issue.HasLabel(m) {
			out.Marked = true
		}
	}
	// The answer: steward's latest answer to this question after it, else the latest reply
	// after it by someone's hand (a comment without a steward marker).
	qid := strconv.FormatInt(question.ID, 10)
	removed := map[string]bool{}
	for _, le := range th.Labels {
		if !le.Added && le.ID > question.ID && slices.Contains(g.MarkerLabels(), le.Label) {
			removed[strings.ToLower(le.By)] = true
		}
	}
	var ans, reply *gitearec.Comment
	after := false
	for i := range th.Comments {
		c := &th.Comments[i]
		if !after {
			after = c.ID == question.ID
			continue
		}
		m, marked := gitearec.TrailingMark(c.Body)
		switch {
		case !marked:
			reply = c
		case m.Kind == "answer" && m.Question == qid &&
			(strings.EqualFold(c.Author, self) || removed[strings.ToLower(c.Author)]):
			ans = c
		}
	}
	if ans == nil {
		ans = reply
	}
	switch {
	case ans != nil && !out.Marked:
		out.Status = "answered"
		out.Answer = clipTo(termsafe.Text(hiddenMarker.ReplaceAllString(ans.Body, "")), maxText)
		out.AnsweredBy, out.AnsweredAt = termsafe.Line(ans.Author), ans.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")
		out.Next = "Read the answer. The item is back in the pool: claim it again (it may be taken) or pick other work."
	case ans != nil:
		out.Status = "pending"
		out.Message = "a reply was posted but the item still carries the clarification marker: a maintainer has not " +
			"settled it yet"
		out.Next = "Wait and poll again; pick other work meanwhile."
	case !out.Marked:
		out.Status = "unmarked"
		out.Message = "the marker label was removed without a reply"
		out.Next = "The item is back in the pool without an answer: claim it again and decide, or pick other work."
	default:
		out.Status = "pending"
		out.Next = "No answer yet. Poll again later; pick other work meanwhile."
	}
	return out
}
