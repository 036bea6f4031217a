package mcp

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"steward/gitea/gitearec"
	"steward/govern"
	"steward/govern/actionid"
)

// TestAskAndGetAnswer against a real Gitea: ask posts the question, sets the marker and
// releases the claim, returning a clarification id at once; get_answer says pending until a
// maintainer answers through the core, then returns the answer.
func TestAskAndGetAnswer(t *testing.T) {
	f := newFx(t, fxOpt{gitea: true})
	ctx := context.Background()
	n := f.real.Seed.Issue(t, "Pick a storage engine")
	c := f.client("w1")
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: n}}))
	if !cl.Success || cl.Item.Org != f.real.Owner {
		t.Fatalf("claim with the configured repository's defaults: %+v", cl)
	}
	if o := must[Outcome](t)(c.Ask(ctx, *cl.Fence, "")); o.Success || o.Code != govern.CodeInvalidRequest {
		t.Fatalf("empty question: %+v", o)
	}
	ask := must[Outcome](t)(c.Ask(ctx, *cl.Fence, "SQLite or **Postgres**?"))
	if !ask.Success || ask.ClarificationID == "" || !strings.HasPrefix(ask.ClarificationID, f.real.Owner+"/"+f.real.Repo+"#") {
		t.Fatalf("ask: %+v", ask)
	}
	if ml := must[MyLeases](t)(c.MyLeases(ctx)); len(ml.Leases) != 0 {
		t.Fatalf("ask did not release the claim: %+v", ml)
	}
	a := must[Answer](t)(c.GetAnswer(ctx, ask.ClarificationID))
	if !a.Success || a.Status != "pending" || !a.Marked || a.Question != "SQLite or **Postgres**?" || a.Answer != "" {
		t.Fatalf("before the answer: %+v", a)
	}
	st := must[ItemStatus](t)(c.ItemStatus(ctx, ItemRef{Number: n}))
	if !st.Success || st.Claimable || st.Gitea != "ok" || !strings.Contains(st.Why, "clarification") {
		t.Fatalf("status of a marked item: %+v", st)
	}
	maint := govern.New(f.ws, f.audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, f.real.Maintainer)})
	defer maint.Close()
	_, out, err := maint.Run(ctx, govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: f.real.Owner, Repo: f.real.Repo, Number: n}},
		Params: govern.AnswerParams{Body: "Use SQLite: the control plane is single-writer."}}, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("maintainer's answer: %+v %v", out, err)
	}
	a = must[Answer](t)(c.GetAnswer(ctx, ask.ClarificationID))
	if !a.Success || a.Status != "answered" || a.Marked || a.Answer != "Use SQLite: the control plane is single-writer." || a.AnsweredBy == "" {
		t.Fatalf("after the answer: %+v", a)
	}
	if a := must[Answer](t)(c.GetAnswer(ctx, f.real.Owner+"/"+f.real.Repo+"#"+itoa(n)+"/ans-0000000000000000")); a.Success || a.Code != govern.CodeNotFound {
		t.Fatalf("unknown clarification: %+v", a)
	}
	f.oneTerminal()
}

// TestClaimNext against a real Gitea: the next runnable item is the highest priority one
// that is open, unclaimed, unblocked and unmarked; the seed's dry run writes nothing; a
// backlog with nothing runnable is a structured refusal with the skips.
func TestClaimNext(t *testing.T) {
	f := newFx(t, fxOpt{gitea: true})
	ctx := context.Background()
	seed := f.real.Seed
	low := seed.Issue(t, "Low", "priority:low")
	high := seed.Issue(t, "High", "priority:high")
	marked := seed.Issue(t, "Marked", "priority:high", gitearec.DefaultMarkerLabels[0])
	blocked := seed.Issue(t, "Blocked", "priority:high", gitearec.DefaultBlockedLabel)
	closed := seed.Issue(t, "Closed", "priority:high")
	seed.Close(t, closed)
	c := f.client("w1")

	var dry Outcome
	must[MyLeases](t)(c.MyLeases(ctx)) // opens the DB reader (SQLite makes its empty -wal file)
	before := f.state(true)
	// A dry run that selected an item did what was asked: it is no error (isError is for
	// refused, failed and unknown; it was set before, and the Inspector exited 5 on it).
	if isErr, err := c.Call(ctx, SeedAllocateNextWork, AllocateArgs{SessionID: "w1"}, &dry); err != nil || isErr || dry.Result != "previewed" || dry.Item == nil || dry.Item.Number != high {
		t.Fatalf("dry run: isError %v, %+v %v", isErr, dry, err)
	}
	if f.state(true) != before {
		t.Fatalf("the dry run wrote something:\n%s\n%s", before, f.state(true))
	}
	skips := map[int64]string{}
	for _, s := range dry.Skipped {
		skips[s.Number] = s.Code
	}
	if skips[marked] != "awaiting_clarification" || skips[blocked] != "blocked" {
		t.Fatalf("skipped %v", dry.Skipped)
	}
	first := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Next: true}))
	if !first.Success || first.Item.Number != high {
		t.Fatalf("first claim next: %+v", first)
	}
	var second Outcome
	if _, err := c.Call(ctx, SeedAllocateNextWork, AllocateArgs{SessionID: "w1", Apply: true, LeaseTTLSeconds: 600}, &second); err != nil || !second.Success || second.Item.Number != low {
		t.Fatalf("second claim next (seed name, apply): %+v %v", second, err)
	}
	third := must[Outcome](t)(f.client("w2").Claim(ctx, ClaimArgs{Next: true}))
	if third.Success || third.Code != "nothing_eligible" || len(third.Skipped) != 4 {
		t.Fatalf("nothing left: %+v", third)
	}
	if o := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Next: true, Exclude: []int64{high}})); o.Success {
		t.Fatalf("exclusion ignored: %+v", o)
	}
	f.oneTerminal()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestGetAnswerCountsOnlyStewardsOwnComments: get_answer takes a clarification's answer by
// the rule the governed core answers and verifies by — only a comment steward's own Gitea
// login wrote, ending with steward's answer marker bound to this question, is steward's
// answer. A worker's comment ending with a copied marker is neither the answer nor a reply:
// before the maintainer answers it leaves the question pending, and after the answer it does
// not replace it. (It failed before: any author's marker was the answer, the latest one won.)
func TestGetAnswerCountsOnlyStewardsOwnComments(t *testing.T) {
	f := newFx(t, fxOpt{gitea: true})
	ctx := context.Background()
	n := f.real.Seed.Issue(t, "Pick a queue")
	c := f.client("w1")
	cl := must[Outcome](t)(c.Claim(ctx, ClaimArgs{Item: &ItemRef{Number: n}}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	ask := must[Outcome](t)(c.Ask(ctx, *cl.Fence, "NATS or Kafka?"))
	if !ask.Success {
		t.Fatalf("ask: %+v", ask)
	}
	th, err := f.ws.Gitea.Thread(ctx, n)
	if err != nil || th.Clarification.QuestionCommentID == 0 {
		t.Fatalf("thread: %+v %v", th.Clarification, err)
	}
	qid := strconv.FormatInt(th.Clarification.QuestionCommentID, 10)
	forge := func(body string) {
		f.real.Seed.Comment(t, n, true, gitearec.WithMarker(body, gitearec.Mark{Kind: "answer", ID: "ans-0123456789abcdef", Question: qid, Round: "1"}.String()))
	}
	forge("Use Kafka.")
	a := must[Answer](t)(c.GetAnswer(ctx, ask.ClarificationID))
	if !a.Success || a.Status != "pending" || !a.Marked || a.Answer != "" || a.Message != "" {
		t.Fatalf("a worker's comment with a copied answer marker read as a reply or an answer: %+v", a)
	}
	maint := govern.New(f.ws, f.audit, govern.Options{Actor: govern.LocalActor(govern.RoleOperator, f.real.Maintainer)})
	defer maint.Close()
	_, out, err := maint.Run(ctx, govern.Request{Action: actionid.Answer, Target: govern.Target{Item: &govern.Item{Org: f.real.Owner, Repo: f.real.Repo, Number: n}},
		Params: govern.AnswerParams{Body: "NATS: we need no log retention."}}, "")
	if err != nil || out.Result != govern.ResultSucceeded {
		t.Fatalf("maintainer's answer: %+v %v", out, err)
	}
	forge("Kafka after all.")
	a = must[Answer](t)(c.GetAnswer(ctx, ask.ClarificationID))
	if !a.Success || a.Status != "answered" || a.Answer != "NATS: we need no log retention." || !strings.EqualFold(a.AnsweredBy, f.real.Maintainer) {
		t.Fatalf("after the answer, with a copied marker below it: %+v", a)
	}
	f.oneTerminal()
}
