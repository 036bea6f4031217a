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
	"steward/gitea/gitearec"
	"steward/govern/actionid"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// maxBody caps an answer or a question; Gitea takes more, but a clarification is prose.
const maxBody = 64 << 10

const markerEvidence = "idempotency marker: "

// giteaFor checks that Gitea is configured and that it serves the item's repository.
func (c *Core) giteaFor(it *Item) (GiteaSide, *Refusal) {
	if c.ws.Gitea == nil {
		return nil, refuse(
			CodeSourceUnavailable,
			"no Gitea is configured for this workspace, so steward cannot read or write the item; configure a Gitea login "+
				"(see docs/config.md)",
		)
	}
	if it == nil || it.Number <= 0 {
		return nil, refuse(CodeInvalidRequest, "name the issue or pull request (org, repo, number)")
	}
	owner, repo := c.ws.Gitea.Repository()
	// Gitea owner and repository names are case-insensitive.
	if (it.Org != "" && !strings.EqualFold(strings.TrimSpace(it.Org), owner)) ||
		(it.Repo != "" && !strings.EqualFold(strings.TrimSpace(it.Repo), repo)) {
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
			return effect{
				refusal: refuse(
					"gitea_refused",
					what+" was refused by Gitea: "+err.Error()+". Nothing was changed; check the login's permissions.",
				),
			}
		}
	}
	return effect{sent: sentBefore, err: fmt.Errorf("%s: %w", what, err)}
}

func markersOn(is gitearec.Issue, markers []string) []string {
	var on []string
	for _, m := range markers {
		if is.HasLabel(m) {
			on = append(on, m)
		}
	}
	slices.Sort(on)
	return on
}

// answerID is stable for one answer to one question of one item (the question comment it
// answers, see clarifyState), so a retry after an unknown outcome finds the comment the first
// attempt may have posted instead of posting it again — while the same words answering
// another question are a new answer (a marker anyone can copy must not swallow an
// answer). The marker also records the round
// (the marker label's addition) and the attempt; neither is part of the id, so a retry in a
// later round, or by another attempt, still finds it.
func answerID(it Item, question, body string) string {
	h := sha256.Sum256(
		[]byte(fmt.Sprintf("%s/%s#%d\x00q=%s\x00%s", lockrec.Fold(it.Org), lockrec.Fold(it.Repo), it.Number, question, body)),
	)
	return "ans-" + hex.EncodeToString(h[:8])
}

// askID is stable for one question of one lease.
func askID(it Item, lease, question string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s/%s#%d\x00%s\x00%s", it.Org, it.Repo, it.Number, lease, question)))
	return "ans-" + hex.EncodeToString(h[:8])
}

// clarifyState is the fence of the clarification actions: the labels seen, for a pull
// request its head SHA, and for an answer the question it answers.
type clarifyState struct {
	Markers  []string
	HeadSHA  string
	Question string // the question comment's id ("body": the item's body; "none")
	Round    string // the timeline event that last added the marker ("none" when unknown)
}

// The evidence lines the clarification actions record, read back by their verifiers.
const (
	questionEvidence = "answers question "
	roundEvidence    = "marker round "
	lastLabelEvent   = "last label event "
	relabelEvidence  = "label to add: "
)

// readItem reads an item for a plan: its marker labels and, for a pull request, its head.
func (c *Core) readItem(ctx context.Context, g GiteaSide, it *Item) (gitearec.Issue, clarifyState, *Refusal) {
	is, err := g.GetIssue(ctx, it.Number)
	if err != nil {
		if gitea.IsNotFound(err) {
			return is, clarifyState{}, refuse(CodeNotFound, fmt.Sprintf("%s does not exist in Gitea", it))
		}
		return is, clarifyState{}, refuse(
			CodeSourceUnavailable,
			"Gitea could not be read ("+err.Error()+"); nothing was changed. Retry when it answers.",
		)
	}
	st := clarifyState{Markers: markersOn(is, g.MarkerLabels())}
	if is.Kind == gitearec.KindPR {
		pr, h := g.PullRequest(ctx, it.Number)
		if !h.OK() {
			return is, st, refuse(
				CodeSourceUnavailable,
				"the pull request's head could not be read ("+h.Reason+"); retry when Gitea answers",
			)
		}
		st.HeadSHA = pr.HeadSHA
	}
	return is, st, nil
}

// selfLogin reads the login steward's token belongs to, as a refusal when it cannot.
func selfLogin(ctx context.Context, g GiteaSide) (string, *Refusal) {
	self, err := g.Self(ctx)
	if err != nil || self == "" {
		return "", refuse(
			CodeSourceUnavailable,
			fmt.Sprintf(
				"steward cannot tell its own Gitea login (%v), so it cannot tell its own comments from anyone else's; nothing "+
					"was changed. Give the login's user in the tea config, or a token that may read its user.",
				err,
			),
		)
	}
	return self, nil
}

// readThread reads an item back whole for a plan: labels, head SHA, question and round.
func (c *Core) readThread(ctx context.Context, g GiteaSide, it *Item) (gitearec.Thread, clarifyState, *Refusal) {
	th, err := g.Thread(ctx, it.Number)
	if err != nil {
		if gitea.IsNotFound(err) {
			return th, clarifyState{}, refuse(CodeNotFound, fmt.Sprintf("%s does not exist in Gitea", it))
		}
		return th, clarifyState{}, refuse(
			CodeSourceUnavailable,
			"Gitea could not be read ("+err.Error()+"); nothing was changed. Retry when it answers.",
		)
	}
	st := clarifyState{Markers: markersOn(th.Issue, g.MarkerLabels()), Question: "none", Round: "none"}
	switch cl := th.Clarification; {
	case cl.QuestionCommentID > 0:
		st.Question = strconv.FormatInt(cl.QuestionCommentID, 10)
	case cl.Rule == gitearec.RuleIssueBody:
		st.Question = "body"
	}
	if id := th.Clarification.LabelEventID; id > 0 {
		st.Round = strconv.FormatInt(id, 10)
	}
	if th.Issue.Kind == gitearec.KindPR {
		pr, h := g.PullRequest(ctx, it.Number)
		if !h.OK() {
			return th, st, refuse(
				CodeSourceUnavailable,
				"the pull request's head could not be read ("+h.Reason+"); retry when Gitea answers",
			)
		}
		st.HeadSHA = pr.HeadSHA
	}
	return th, st, nil
}

// answer posts a maintainer's answer and removes the clarification marker.
type answer struct{}

func (answer) spec() Spec {
	return Spec{
		ID:       actionid.Answer,
		Title:    "Answer a clarification (comment, then remove the marker label)",
		MinRole:  RoleOperator,
		Tier:     TierGatedWrite,
		Undoable: true,
	}
}

func (answer) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	g, r := c.giteaFor(req.Target.Item)
	if r != nil {
		return &plan{refusal: r}, nil
	}
	body := strings.TrimSpace(paramsFor[AnswerParams](req).Body)
	switch {
	case body == "":
		return &plan{refusal: refuse(CodeInvalidRequest, "the answer is empty; write the answer first")}, nil
	case len(body) > maxBody:
		return &plan{
			refusal: refuse(CodeInvalidRequest, fmt.Sprintf("the answer is %d bytes; keep it under %d", len(body), maxBody)),
		}, nil
	}
	if _, r := selfLogin(ctx, g); r != nil {
		return &plan{refusal: r}, nil
	}
	it := *req.Target.Item
	th, st, r := c.readThread(ctx, g, &it)
	p := &plan{state: st, refusal: r}
	if r != nil {
		return p, nil
	}
	if len(st.Markers) == 0 {
		p.refusal = refuse(
			"not_marked",
			fmt.Sprintf(
				"%s carries no clarification marker (%s); it may have been answered already. Refresh.",
				it,
				strings.Join(g.MarkerLabels(), ", "),
			),
		)
	}
	if seen := paramsFor[AnswerParams](req).QuestionComment; seen != "" && seen != st.Question && p.refusal == nil {
		p.refusal = refuse(
			"question_changed",
			fmt.Sprintf(
				"%s asks something else now (question %s, not the %s you answered); read the question again, then answer it",
				it,
				st.Question,
				seen,
			),
		)
	}
	id := answerID(it, st.Question, body)
	mark := gitearec.Mark{Kind: "answer", ID: id, Question: st.Question, Round: st.Round}
	comment := gitearec.WithMarker(body, mark.String())
	p.effects = []string{"comment on " + it.String() + " (the marker also names this attempt):\n" + comment}
	for _, m := range st.Markers {
		p.effects = append(p.effects, "remove label "+m+" (the item re-enters the pool)")
	}
	p.fences = []string{
		"the marker labels " + strings.Join(st.Markers, ", ") + " are still on the item",
		"the question is still " + st.Question + ", asked in marker round " + st.Round,
	}
	if st.HeadSHA != "" {
		p.fences = append(p.fences, "pull request head is still "+st.HeadSHA)
	}
	p.evidence = []string{
		"item " + it.String() + ": " + th.Issue.Title,
		markerEvidence + id,
		questionEvidence + st.Question,
		roundEvidence + st.Round,
		"a retry first looks for this marker on a comment steward's own login wrote, so the answer is never posted " +
			"twice; the same words answering a later question are a new answer",
	}
	if len(st.Markers) > 0 {
		p.inverse = &Request{Action: actionid.Relabel, Target: Target{Item: &it}, Params: RelabelParams{Label: st.Markers[0]}}
	}
	return p, nil
}

func (answer) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	g := c.ws.Gitea
	it := *req.Target.Item
	st := p.state.(clarifyState)
	body := strings.TrimSpace(paramsFor[AnswerParams](req).Body)
	id := answerID(it, st.Question, body)
	self, err := g.Self(ctx)
	if err != nil {
		return effect{err: fmt.Errorf("reading steward's own login: %w", err)}
	}
	th, err := g.Thread(ctx, it.Number)
	if err != nil {
		// A read has no effect: whatever happened to it, nothing was written.
		return effect{err: fmt.Errorf("looking for an earlier answer: %w", err)}
	}
	var eff []string
	if cm, m, found := th.FindOwnMark(self, "answer", id); found {
		eff = append(
			eff,
			fmt.Sprintf("the answer was posted already (comment %d, by attempt %s); not posted again", cm.ID, m.Attempt),
		)
	} else {
		c.doStep("gitea-before-comment")
		mark := gitearec.Mark{Kind: "answer", ID: id, Question: st.Question, Round: st.Round, Attempt: attempt}
		cid, err := g.CreateComment(ctx, it.Number, gitearec.WithMarker(body, mark.String()))
		if err != nil {
			return giteaErr("posting the answer", err, false)
		}
		eff = append(eff, fmt.Sprintf("answer posted as comment %d", cid))
	}
	c.doStep("gitea-comment-posted")
	for _, m := range st.Markers {
		if err := g.RemoveLabel(ctx, it.Number, m); err != nil {
			if errors.Is(err, gitea.ErrLabelNotFound) || gitea.IsNotFound(err) {
				eff = append(eff, "label "+m+" was already gone")
				continue
			}
			return giteaErr("removing label "+m, err, true)
		}
		eff = append(eff, "label "+m+" removed")
		c.doStep("gitea-label-removed")
	}
	return effect{effects: eff}
}

// verify settles an answer from the item read back: the comment steward's own login posted
// with the attempt's marker (anyone can write a marker's text, so no other comment counts),
// then the marker label of the round it answered.
func (answer) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	id, round := evidenceOf(intent, markerEvidence), evidenceOf(intent, roundEvidence)
	g, r := c.giteaFor(intent.Target.Item)
	if r != nil || id == "" {
		return "", []string{"cannot read the item back"}, false
	}
	self, err := g.Self(ctx)
	if err != nil {
		return "", []string{"steward's own login is unknown: " + err.Error()}, false
	}
	th, err := g.Thread(ctx, intent.Target.Item.Number)
	if err != nil {
		return "", []string{"the item is unreadable: " + err.Error()}, false
	}
	cm, m, found := th.FindOwnMark(self, "answer", id)
	if !found {
		return ResultFailed, []string{"no comment by " + self + " carries answer marker " + id + "; nothing was posted"}, true
	}
	by := "this attempt"
	if m.Attempt != "" && m.Attempt != intent.Attempt {
		by = "attempt " + m.Attempt
	}
	on := len(markersOn(th.Issue, g.MarkerLabels())) > 0
	now := "none"
	if th.Clarification.LabelEventID > 0 {
		now = strconv.FormatInt(th.Clarification.LabelEventID, 10)
	}
	if !on || (round != "" && round != "none" && now != round) {
		return ResultSucceeded, []string{
			fmt.Sprintf(
				"comment %d by %s (posted by %s) carries marker %s, and the marker label of round %s is gone",
				cm.ID,
				self,
				by,
				id,
				round,
			),
		}, true
	}
	return "", []string{
		fmt.Sprintf(
			"comment %d (posted by %s) carries marker %s but the marker label of its round is still on; apply the answer "+
				"again (it will not post twice)",
			cm.ID,
			by,
			id,
		),
	}, false
}

// askMarker is the hidden marker a worker's question ends with, whose clarification id (the
// clarification_id a successful clarification.ask returns in its detail) is id:
// "<!-- steward:ask id=<id> -->". It names no attempt, so the text stays the same for every
// attempt of one question (a worker polling for its answer finds it by this exact text).
func askMarker(id string) string { return gitearec.Mark{Kind: "ask", ID: id}.String() }

// AskMarkOf is the question marker a clarification.ask attempt's intent posts with its
// question ("" for any other record): the join between a question on the item and the
// attempt — whose actor is the worker session that asked — in steward's own audit log.
func AskMarkOf(intent Record) string {
	if intent.Action != actionid.Ask {
		return ""
	}
	return evidenceOf(intent, markerEvidence)
}

// evidenceOf returns the value of the intent's evidence line starting with prefix.
func evidenceOf(intent Record, prefix string) string {
	v := ""
	for _, e := range intent.Evidence {
		if s, ok := strings.CutPrefix(e, prefix); ok {
			v = s
		}
	}
	return v
}

// verifyAsk settles a question from the item read back — the comment steward's own login
// posted with the attempt's ask marker, and the marker label on — and then from the claim's
// release, the last step, whose lease.release event names the attempt (verifyRelease).
func (c *Core) verifyAsk(ctx context.Context, intent Record) (Result, []string, bool) {
	id := evidenceOf(intent, markerEvidence)
	it := intent.Target.Item
	if it == nil && intent.Target.LeaseID != "" {
		// A worker asks about the item of its lease.
		if l, ref, err := c.readLease(ctx, intent.Target.LeaseID); err == nil && ref == nil {
			it = itemOf(l.Work)
		}
	}
	g, r := c.giteaFor(it)
	if r != nil || id == "" {
		return "", []string{"cannot read the item back"}, false
	}
	self, err := g.Self(ctx)
	if err != nil {
		return "", []string{"steward's own login is unknown: " + err.Error()}, false
	}
	th, err := g.Thread(ctx, it.Number)
	if err != nil {
		return "", []string{"the item is unreadable: " + err.Error()}, false
	}
	cm, _, found := th.FindOwnMark(self, "ask", id)
	if !found {
		return ResultFailed, []string{
			"no comment by " + self + " carries question marker " + id + "; nothing was posted",
		}, true
	}
	if len(markersOn(th.Issue, g.MarkerLabels())) == 0 {
		return "", []string{
			fmt.Sprintf(
				"comment %d was posted but the marker label is not on; apply the action again (it will not post twice)",
				cm.ID,
			),
		}, false
	}
	asked := fmt.Sprintf("comment %d by %s carries marker %s and the marker label is on", cm.ID, self, id)
	res, ev, ok := c.verifyRelease(ctx, intent)
	switch {
	case ok && res == ResultSucceeded:
		return ResultSucceeded, append([]string{asked}, ev...), true
	case ok:
		return "", append(append([]string{asked + ", but the claim was not released by this attempt"}, ev...),
			"ask again: it finds its question (it never posts twice) and releases the claim"), false
	}
	return "", append([]string{asked}, ev...), false
}

// ask is a worker's request for clarification: comment, marker label, then release.
type ask struct{}

func (ask) spec() Spec {
	return Spec{
		ID:      actionid.Ask,
		Title:   "Ask for clarification (comment, add the marker label, release the claim)",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
		Worker:  true,
	}
}

type askState struct {
	Worker  workerState
	Clarify clarifyState
}

func (ask) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	wp, l, err := c.workerPlan(
		ctx,
		req,
		leases.OpRelease,
		func(l *leaserec.Lease, f leases.Fence) leases.Verdict { return leases.CheckRelease(l, f) },
	)
	if err != nil || l == nil || wp.refusal != nil {
		return wp, err
	}
	it := itemOf(l.Work)
	g, r := c.giteaFor(it)
	if r != nil {
		wp.refusal = r
		return wp, nil
	}
	q := strings.TrimSpace(paramsFor[AskParams](req).Question)
	if q == "" || len(q) > maxBody {
		wp.refusal = refuse(CodeInvalidRequest, "the question must be 1 to 65536 bytes of Markdown")
		return wp, nil
	}
	if _, r := selfLogin(ctx, g); r != nil {
		wp.refusal = r
		return wp, nil
	}
	_, cs, r := c.readItem(ctx, g, it)
	if r != nil {
		wp.refusal = r
		return wp, nil
	}
	id := askID(*it, l.LeaseID, q)
	label := g.MarkerLabels()[0]
	p := *wp
	p.state = askState{Worker: wp.state.(workerState), Clarify: cs}
	p.effects = []string{
		"comment on " + it.String() + ":\n" + gitearec.WithMarker(q, askMarker(id)),
		"add label " + label,
		"release lease " + l.LeaseID + " and archive its lock (the item waits for a maintainer)",
	}
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
	q := strings.TrimSpace(paramsFor[AskParams](req).Question)
	id := askID(*it, l.LeaseID, q)
	self, err := g.Self(ctx)
	if err != nil {
		return effect{err: fmt.Errorf("reading steward's own login: %w", err)}
	}
	th, err := g.Thread(ctx, it.Number)
	if err != nil {
		return effect{err: fmt.Errorf("looking for an earlier question: %w", err)}
	}
	cm, _, found := th.FindOwnMark(self, "ask", id)
	commentID := cm.ID
	if !found {
		c.doStep("gitea-before-comment")
		if commentID, err = g.CreateComment(ctx, it.Number, gitearec.WithMarker(q, askMarker(id))); err != nil {
			return giteaErr("posting the question", err, false)
		}
	}
	c.doStep("gitea-comment-posted")
	label := g.MarkerLabels()[0]
	if err := g.AddLabels(ctx, it.Number, label); err != nil {
		return giteaErr("adding label "+label, err, true)
	}
	c.doStep("gitea-label-added")
	eff := c.releaseOwn(ctx, st.Worker, attempt, "clarification")
	if eff.refusal != nil {
		return effect{
			sent: true,
			err: errors.New(
				"the question was posted and labelled, but releasing the claim was refused: " + eff.refusal.Message,
			),
		}
	}
	if eff.err != nil {
		eff.sent = true
		return eff
	}
	eff.effects = append([]string{"question posted on " + it.String(), "label " + label + " added"}, eff.effects...)
	if eff.detail == nil {
		eff.detail = map[string]string{}
	}
	eff.detail["clarification_id"], eff.detail["question_comment_id"], eff.detail["marker_label"] = id, strconv.FormatInt(
		commentID,
		10,
	), label
	return eff
}

func (ask) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	return c.verifyAsk(ctx, intent)
}

// relabel puts a clarification marker back: the inverse of an answer's label removal.
type relabel struct{}

func (relabel) spec() Spec {
	return Spec{
		ID:      actionid.Relabel,
		Title:   "Re-add a clarification marker label (undo of an answer's label change)",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
	}
}

func (relabel) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	g, r := c.giteaFor(req.Target.Item)
	if r != nil {
		return &plan{refusal: r}, nil
	}
	label := paramsFor[RelabelParams](req).Label
	if !slices.Contains(g.MarkerLabels(), label) {
		return &plan{
			refusal: refuse(
				CodeInvalidRequest,
				fmt.Sprintf("%q is not a configured clarification marker; only markers are re-added", label),
			),
		}, nil
	}
	if _, r := selfLogin(ctx, g); r != nil {
		return &plan{refusal: r}, nil
	}
	th, st, r := c.readThread(ctx, g, req.Target.Item)
	p := &plan{state: st, refusal: r}
	if r == nil && slices.Contains(st.Markers, label) {
		p.refusal = refuse("nothing_to_do", "the item carries "+label+" already")
	}
	p.effects = []string{
		"add label " + label + " to " + req.Target.Item.String() + " (the item waits for a maintainer again)",
	}
	p.fences = []string{"the item's marker labels are unchanged"}
	last := int64(0)
	for _, e := range th.Labels {
		last = max(last, e.ID)
	}
	p.evidence = []string{lastLabelEvent + strconv.FormatInt(last, 10), relabelEvidence + label}
	return p, nil
}

func (relabel) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	label := paramsFor[RelabelParams](req).Label
	if err := c.ws.Gitea.AddLabels(ctx, req.Target.Item.Number, label); err != nil {
		return giteaErr("adding label "+label, err, false)
	}
	c.doStep("gitea-label-added")
	return effect{effects: []string{"label " + label + " added"}}
}

// verify settles a relabel from the item's label events: an addition of the label by
// steward's own login after the last label event the preview saw proves it; none, that it
// did not happen (adding a label the item already carries makes no event, and then the
// relabel changed nothing).
func (relabel) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	since, err := strconv.ParseInt(evidenceOf(intent, lastLabelEvent), 10, 64)
	want := evidenceOf(intent, relabelEvidence)
	if err != nil || want == "" || intent.Target.Item == nil {
		return "", []string{
			"the attempt recorded no label event to compare with; read the item's labels and resolve by hand",
		}, false
	}
	g, r := c.giteaFor(intent.Target.Item)
	if r != nil {
		return "", []string{"cannot read the item back"}, false
	}
	self, err := g.Self(ctx)
	if err != nil {
		return "", []string{"steward's own login is unknown: " + err.Error()}, false
	}
	th, err := g.Thread(ctx, intent.Target.Item.Number)
	if err != nil {
		return "", []string{"the item is unreadable: " + err.Error()}, false
	}
	for _, e := range th.Labels {
		if e.ID > since && e.Added && e.Label == want && strings.EqualFold(e.By, self) {
			return ResultSucceeded, []string{fmt.Sprintf("label event %d: %s added %s", e.ID, self, e.Label)}, true
		}
	}
	return ResultFailed, []string{fmt.Sprintf("no label added by %s after event %d", self, since)}, true
}
