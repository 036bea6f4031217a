package govern

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"steward/gitea"
	"steward/leases"
)

// Action ids of the clarification actions.
const (
	ActionAnswer  = "clarification.answer"
	ActionAsk     = "clarification.ask"
	ActionRelabel = "clarification.relabel"
)

// maxBody caps an answer or a question; Gitea takes more, but a clarification is prose.
const maxBody = 64 << 10

const markerEvidence = "idempotency marker: "

// giteaFor checks that Gitea is configured and that it serves the item's repository.
func (c *Core) giteaFor(it *Item) (GiteaSide, *Refusal) {
	if c.ws.Gitea == nil {
		return nil, refuse(CodeSourceUnavailable, "no Gitea is configured for this workspace, so steward cannot read or write the item; configure a Gitea login (see docs/config.md)")
	}
	if it == nil || it.Number <= 0 {
		return nil, refuse(CodeInvalidRequest, "name the issue or pull request (org, repo, number)")
	}
	owner, repo := c.ws.Gitea.Repository()
	// Gitea owner and repository names are case-insensitive.
	if (it.Org != "" && !strings.EqualFold(strings.TrimSpace(it.Org), owner)) || (it.Repo != "" && !strings.EqualFold(strings.TrimSpace(it.Repo), repo)) {
		return nil, refuse(CodeInvalidRequest, fmt.Sprintf("%s is not in the configured repository %s/%s", it, owner, repo))
	}
	return c.ws.Gitea, nil
}

// giteaErr turns a Gitea error into the apply's effect: unknown once the request may have
// landed, failed before it was sent, refused on an HTTP refusal.
func giteaErr(what string, err error, sentBefore bool) effect {
	switch gitea.Classify(err) {
	case gitea.OutcomeUnknown:
		return effect{sent: true, err: fmt.Errorf("%s: the response was lost after the request was sent: %w", what, err)}
	case gitea.OutcomeRefused:
		if !sentBefore {
			return effect{refusal: refuse("gitea_refused", what+" was refused by Gitea: "+err.Error()+". Nothing was changed; check the login's permissions.")}
		}
	}
	return effect{sent: sentBefore, err: fmt.Errorf("%s: %w", what, err)}
}

func markersOn(is gitea.Issue, markers []string) []string {
	var on []string
	for _, m := range markers {
		if is.HasLabel(m) {
			on = append(on, m)
		}
	}
	slices.Sort(on)
	return on
}

// answerID is stable for one answer to one item, so a retry after an unknown outcome finds
// the comment the first attempt may have posted instead of posting it again.
func answerID(it Item, body string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%s#%d\x00%s", it.Org, it.Repo, it.Number, body)))
	return "ans-" + hex.EncodeToString(h[:8])
}

// clarifyState is the fence of the clarification actions: the labels seen and, for a pull
// request, its head SHA.
type clarifyState struct {
	Markers []string
	HeadSHA string
}

func (c *Core) readItem(ctx context.Context, g GiteaSide, it *Item) (gitea.Issue, clarifyState, *Refusal) {
	is, err := g.GetIssue(ctx, it.Number)
	if err != nil {
		if gitea.IsNotFound(err) {
			return is, clarifyState{}, refuse(CodeNotFound, fmt.Sprintf("%s does not exist in Gitea", it))
		}
		return is, clarifyState{}, refuse(CodeSourceUnavailable, "Gitea could not be read ("+err.Error()+"); nothing was changed. Retry when it answers.")
	}
	st := clarifyState{Markers: markersOn(is, g.MarkerLabels())}
	if is.Kind == gitea.KindPR {
		pr, h := g.PullRequest(ctx, it.Number)
		if !h.OK() {
			return is, st, refuse(CodeSourceUnavailable, "the pull request's head could not be read ("+h.Reason+"); retry when Gitea answers")
		}
		st.HeadSHA = pr.HeadSHA
	}
	return is, st, nil
}

// answer posts a maintainer's answer and removes the clarification marker.
type answer struct{}

func (answer) spec() Spec {
	return Spec{ID: ActionAnswer, Title: "Answer a clarification (comment, then remove the marker label)", MinRole: RoleOperator, Tier: TierGatedWrite, Undoable: true}
}

func (answer) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	g, r := c.giteaFor(req.Target.Item)
	if r != nil {
		return &plan{refusal: r}, nil
	}
	body := strings.TrimSpace(req.Params["body"])
	switch {
	case body == "":
		return &plan{refusal: refuse(CodeInvalidRequest, "the answer is empty; write the answer first")}, nil
	case len(body) > maxBody:
		return &plan{refusal: refuse(CodeInvalidRequest, fmt.Sprintf("the answer is %d bytes; keep it under %d", len(body), maxBody))}, nil
	}
	it := *req.Target.Item
	is, st, r := c.readItem(ctx, g, &it)
	p := &plan{state: st, refusal: r}
	if r != nil {
		return p, nil
	}
	if len(st.Markers) == 0 {
		p.refusal = refuse("not_marked", fmt.Sprintf("%s carries no clarification marker (%s); it may have been answered already. Refresh.", it, strings.Join(g.MarkerLabels(), ", ")))
	}
	id := answerID(it, body)
	comment := gitea.WithMarker(body, gitea.AnswerMarker(id))
	p.effects = []string{"comment on " + it.String() + ":\n" + comment}
	for _, m := range st.Markers {
		p.effects = append(p.effects, "remove label "+m+" (the item re-enters the pool)")
	}
	p.fences = []string{"the marker labels " + strings.Join(st.Markers, ", ") + " are still on the item"}
	if st.HeadSHA != "" {
		p.fences = append(p.fences, "pull request head is still "+st.HeadSHA)
	}
	p.evidence = []string{"item " + it.String() + ": " + is.Title, markerEvidence + id, "a retry first looks for this marker, so the answer is never posted twice"}
	if len(st.Markers) > 0 {
		p.inverse = &Request{Action: ActionRelabel, Target: Target{Item: &it}, Params: map[string]string{"label": st.Markers[0]}}
	}
	return p, nil
}

func (answer) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	g := c.ws.Gitea
	it := *req.Target.Item
	body := strings.TrimSpace(req.Params["body"])
	marker := gitea.AnswerMarker(answerID(it, body))
	var eff []string
	found, cm, err := g.FindCommentWithMarker(ctx, it.Number, marker)
	if err != nil {
		// A read has no effect: whatever happened to it, nothing was written.
		return effect{err: fmt.Errorf("looking for an earlier answer: %w", err)}
	}
	if found {
		eff = append(eff, fmt.Sprintf("the answer was posted already (comment %d); not posted again", cm.ID))
	} else {
		c.doStep("gitea-before-comment")
		id, err := g.CreateComment(ctx, it.Number, gitea.WithMarker(body, marker))
		if err != nil {
			return giteaErr("posting the answer", err, false)
		}
		eff = append(eff, fmt.Sprintf("answer posted as comment %d", id))
	}
	for _, m := range p.state.(clarifyState).Markers {
		if err := g.RemoveLabel(ctx, it.Number, m); err != nil {
			if errors.Is(err, gitea.ErrLabelNotFound) || gitea.IsNotFound(err) {
				eff = append(eff, "label "+m+" was already gone")
				continue
			}
			return giteaErr("removing label "+m, err, true)
		}
		eff = append(eff, "label "+m+" removed")
	}
	return effect{effects: eff}
}

func (answer) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyMarker(ctx, intent, gitea.AnswerMarker, false)
}

// verifyMarker settles a clarification attempt by reading the item back: the comment with
// the attempt's marker, and the marker label's presence (wantLabel: ask adds it, answer
// removes it).
func (c *Core) verifyMarker(ctx context.Context, intent Record, mk func(string) string, wantLabel bool) (Result, []string, bool) {
	var id string
	for _, e := range intent.Evidence {
		if v, ok := strings.CutPrefix(e, markerEvidence); ok {
			id = v
		}
	}
	g, r := c.giteaFor(intent.Target.Item)
	if r != nil || id == "" {
		return "", []string{"cannot read the item back"}, false
	}
	n := intent.Target.Item.Number
	found, cm, err := g.FindCommentWithMarker(ctx, n, mk(id))
	if err != nil {
		return "", []string{"comments unreadable: " + err.Error()}, false
	}
	if !found {
		return ResultFailed, []string{"no comment carries marker " + id + "; nothing was posted"}, true
	}
	is, err := g.GetIssue(ctx, n)
	if err != nil {
		return "", []string{fmt.Sprintf("comment %d found; labels unreadable: %v", cm.ID, err)}, false
	}
	on := len(markersOn(is, g.MarkerLabels())) > 0
	if on == wantLabel {
		return ResultSucceeded, []string{fmt.Sprintf("comment %d carries marker %s and the marker label is %s", cm.ID, id, map[bool]string{true: "on", false: "off"}[on])}, true
	}
	return "", []string{fmt.Sprintf("comment %d was posted but the label change did not happen; apply the action again (it will not post twice)", cm.ID)}, false
}

// AskMarker is the hidden marker of a worker's question whose clarification id (the
// clarification_id a successful clarification.ask returns in its detail) is id.
func AskMarker(id string) string { return askMarker(id) }

// askMarker is the hidden marker of a worker's question.
func askMarker(id string) string {
	return strings.Replace(gitea.AnswerMarker(id), "steward:answer", "steward:ask", 1)
}

// ask is a worker's request for clarification: comment, marker label, then release.
type ask struct{}

func (ask) spec() Spec {
	return Spec{ID: ActionAsk, Title: "Ask for clarification (comment, add the marker label, release the claim)", MinRole: RoleOperator, Tier: TierGatedWrite, Worker: true}
}

type askState struct {
	Worker  workerState
	Clarify clarifyState
}

func (ask) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	wp, l, err := c.workerPlan(ctx, req, leases.OpRelease, func(l *leases.Lease, f leases.Fence) leases.Verdict { return leases.CheckRelease(l, f) })
	if err != nil || l == nil || wp.refusal != nil {
		return wp, err
	}
	it := itemOf(l.Work)
	g, r := c.giteaFor(it)
	if r != nil {
		wp.refusal = r
		return wp, nil
	}
	q := strings.TrimSpace(req.Params["question"])
	if q == "" || len(q) > maxBody {
		wp.refusal = refuse(CodeInvalidRequest, "the question must be 1 to 65536 bytes of Markdown")
		return wp, nil
	}
	_, cs, r := c.readItem(ctx, g, it)
	if r != nil {
		wp.refusal = r
		return wp, nil
	}
	id := answerID(*it, l.LeaseID+"\x00"+q)
	label := g.MarkerLabels()[0]
	p := *wp
	p.state = askState{Worker: wp.state.(workerState), Clarify: cs}
	p.effects = []string{"comment on " + it.String() + ":\n" + gitea.WithMarker(q, askMarker(id)), "add label " + label, "release lease " + l.LeaseID + " and archive its lock (the item waits for a maintainer)"}
	p.evidence = append(p.evidence, markerEvidence+id)
	return &p, nil
}

func (ask) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	st := p.state.(askState)
	g := c.ws.Gitea
	l, _, err := c.readLease(ctx, st.Worker.Fence.LeaseID)
	if err != nil || l == nil {
		return effect{err: fmt.Errorf("re-reading the lease: %v", err)}
	}
	it := itemOf(l.Work)
	q := strings.TrimSpace(req.Params["question"])
	id := answerID(*it, l.LeaseID+"\x00"+q)
	marker := askMarker(id)
	found, cm, err := g.FindCommentWithMarker(ctx, it.Number, marker)
	if err != nil {
		return effect{err: fmt.Errorf("looking for an earlier question: %w", err)}
	}
	commentID := cm.ID
	if !found {
		if commentID, err = g.CreateComment(ctx, it.Number, gitea.WithMarker(q, marker)); err != nil {
			return giteaErr("posting the question", err, false)
		}
	}
	label := g.MarkerLabels()[0]
	if err := g.AddLabels(ctx, it.Number, label); err != nil {
		return giteaErr("adding label "+label, err, true)
	}
	eff := c.releaseOwn(ctx, st.Worker, attempt, "clarification")
	if eff.refusal != nil {
		return effect{sent: true, err: errors.New("the question was posted and labelled, but releasing the claim was refused: " + eff.refusal.Message)}
	}
	if eff.err != nil {
		eff.sent = true
		return eff
	}
	eff.effects = append([]string{"question posted on " + it.String(), "label " + label + " added"}, eff.effects...)
	if eff.detail == nil {
		eff.detail = map[string]string{}
	}
	eff.detail["clarification_id"], eff.detail["question_comment_id"], eff.detail["marker_label"] = id, strconv.FormatInt(commentID, 10), label
	return eff
}

func (ask) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyMarker(ctx, intent, askMarker, true)
}

// relabel puts a clarification marker back: the inverse of an answer's label removal.
type relabel struct{}

func (relabel) spec() Spec {
	return Spec{ID: ActionRelabel, Title: "Re-add a clarification marker label (undo of an answer's label change)", MinRole: RoleOperator, Tier: TierGatedWrite}
}

func (relabel) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	g, r := c.giteaFor(req.Target.Item)
	if r != nil {
		return &plan{refusal: r}, nil
	}
	label := req.Params["label"]
	if !slices.Contains(g.MarkerLabels(), label) {
		return &plan{refusal: refuse(CodeInvalidRequest, fmt.Sprintf("%q is not a configured clarification marker; only markers are re-added", label))}, nil
	}
	_, st, r := c.readItem(ctx, g, req.Target.Item)
	p := &plan{state: st, refusal: r}
	if r == nil && slices.Contains(st.Markers, label) {
		p.refusal = refuse("nothing_to_do", "the item carries "+label+" already")
	}
	p.effects = []string{"add label " + label + " to " + req.Target.Item.String() + " (the item waits for a maintainer again)"}
	p.fences = []string{"the item's marker labels are unchanged"}
	return p, nil
}

func (relabel) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	if err := c.ws.Gitea.AddLabels(ctx, req.Target.Item.Number, req.Params["label"]); err != nil {
		return giteaErr("adding label "+req.Params["label"], err, false)
	}
	return effect{effects: []string{"label " + req.Params["label"] + " added"}}
}

func (relabel) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return "", []string{"read the item's labels and resolve by hand"}, false
}
