package mcp

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"steward/govern"
)

const rid1, rid2, rid3 = "3f0c1d9e-7a41-4b7e-9d38-1f2a6c5e8b01", "3f0c1d9e-7a41-4b7e-9d38-1f2a6c5e8b02", "3f0c1d9e-7a41-4b7e-9d38-1f2a6c5e8b03"

// TestRetryWithRequestIDReturnsTheFirstAnswer: a claim, heartbeat or release sent again
// with the same request_id gets the first call's answer — the same attempt, lease, fence
// and claim token — and nothing is written again, not even an audit record; also when the
// retry comes from a new connection (the reply was lost with the connection), which takes
// the session up. The same request_id for another call is refused. (It failed before:
// request_id was no argument, and a retried heartbeat was refused fence_moved, a retried
// claim already_held, with the claim's token lost.)
func TestRetryWithRequestIDReturnsTheFirstAnswer(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	c := f.client("w1")
	call := func(c *Client, tool string, args any) Outcome {
		t.Helper()
		var o Outcome
		if _, err := c.Call(ctx, tool, args, &o); err != nil {
			t.Fatal(err)
		}
		return o
	}
	claim := ClaimArgs{SessionID: "w1", Item: f.item(7), RequestID: rid1}
	first := call(c, ToolClaim, claim)
	if !first.Success || first.Fence == nil || first.Fence.ClaimToken == "" {
		t.Fatalf("claim: %+v", first)
	}
	before := f.state(true)
	if again := call(c, ToolClaim, claim); !reflect.DeepEqual(again, first) {
		t.Fatalf("the retried claim:\n%+v\nthe first:\n%+v", again, first)
	}
	// The reply was lost with the connection: a new connection retries and is answered,
	// and holds the session from then on.
	c2 := f.client("w1")
	if again := call(c2, ToolClaim, claim); !reflect.DeepEqual(again, first) {
		t.Fatalf("the claim retried from a new connection:\n%+v\nthe first:\n%+v", again, first)
	}
	if after := f.state(true); after != before {
		t.Fatalf("a retry wrote:\n%s\n%s", before, after)
	}
	if ml := must[MyLeases](t)(c2.MyLeases(ctx)); len(ml.Leases) != 1 || ml.Leases[0].Fence == nil || ml.Leases[0].Fence.ClaimToken != first.Fence.ClaimToken {
		t.Fatalf("my_leases after the retry: %+v", ml)
	}
	other := claim
	other.Item = f.item(8)
	if o := call(c2, ToolClaim, other); o.Success || o.Code != govern.CodeInvalidRequest || o.Attempt != "" {
		t.Fatalf("a request_id used for another call: %+v", o)
	}

	hb := FencedArgs{SessionID: "w1", Fence: first.Fence, RequestID: rid2}
	h1 := call(c2, ToolHeartbeat, hb)
	if !h1.Success {
		t.Fatalf("heartbeat: %+v", h1)
	}
	if h2 := call(c2, ToolHeartbeat, hb); !reflect.DeepEqual(h1, h2) {
		t.Fatalf("the retried heartbeat:\n%+v\nthe first:\n%+v", h2, h1)
	}
	if o := call(c2, ToolHeartbeat, FencedArgs{SessionID: "w1", Fence: first.Fence}); o.Code != govern.CodeFenceMoved {
		t.Fatalf("the old fence without the request_id is a new call, refused fence_moved: %+v", o)
	}
	rel := FencedArgs{SessionID: "w1", Fence: h1.Fence, RequestID: rid3}
	r1 := call(c2, ToolRelease, rel)
	if r2 := call(c2, ToolRelease, rel); !r1.Success || !reflect.DeepEqual(r1, r2) {
		t.Fatalf("release %+v, retried %+v", r1, r2)
	}
	if o := call(c2, ToolRelease, FencedArgs{SessionID: "w1", Fence: h1.Fence, RequestID: "short"}); o.Code != govern.CodeInvalidRequest {
		t.Fatalf("a request_id too short to be a secret: %+v", o)
	}
	// One attempt per call, whatever the retries: claim, heartbeat, the refused heartbeat,
	// release.
	if atts := f.oneTerminal(); len(atts) != 4 {
		t.Fatalf("%d attempts, want 4", len(atts))
	}
}

// TestRetryWaitsForTheFirstCall: a retry that arrives while the first call is still being
// applied waits for it and gets its answer; the claim is made once. (It failed before: the
// retry was another call, refused already_held at best.)
func TestRetryWaitsForTheFirstCall(t *testing.T) {
	reached, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	f := newFx(t, fxOpt{step: func(name string) {
		if name == "intent-written" {
			once.Do(func() { close(reached); <-release })
		}
	}})
	waiting := make(chan struct{})
	f.srv.retries.onWait = func() { close(waiting) }
	ctx := context.Background()
	claim := ClaimArgs{SessionID: "w1", Item: f.item(3), RequestID: rid1}
	type answer struct {
		o   Outcome
		err error
	}
	firstc := make(chan answer, 1)
	c1 := f.client("w1")
	go func() {
		var o Outcome
		_, err := c1.Call(ctx, ToolClaim, claim, &o)
		firstc <- answer{o, err}
	}()
	<-reached
	retryc := make(chan answer, 1)
	c2 := f.client("w1")
	go func() {
		var o Outcome
		_, err := c2.Call(ctx, ToolClaim, claim, &o)
		retryc <- answer{o, err}
	}()
	select {
	case <-waiting:
	case b := <-retryc:
		close(release)
		t.Fatalf("the retry was answered while the first call was running: %+v %v", b.o, b.err)
	}
	close(release)
	a, b := <-firstc, <-retryc
	if a.err != nil || b.err != nil || !a.o.Success || !reflect.DeepEqual(a.o, b.o) {
		t.Fatalf("first %+v %v\nretry %+v %v", a.o, a.err, b.o, b.err)
	}
	if atts := f.oneTerminal(); len(atts) != 1 {
		t.Fatalf("%d attempts, want 1", len(atts))
	}
}

// TestRebindWithTheClaimToken: a worker that reconnects (its old connection still open, as
// an HTTP session outlives a client that closed without ending it) takes its session up by
// presenting the claim token: my_leases shows its fence, heartbeat takes; the old
// connection is then refused, and a connection without the token is refused before and
// after. (It failed before: the new connection was refused not_owner until the lease
// expired.)
func TestRebindWithTheClaimToken(t *testing.T) {
	f := newFx(t, fxOpt{})
	ctx := context.Background()
	old := f.client("w1")
	cl := must[Outcome](t)(old.Claim(ctx, ClaimArgs{Item: f.item(5)}))
	if !cl.Success {
		t.Fatalf("claim: %+v", cl)
	}
	tok := cl.Fence.ClaimToken
	stranger := f.client("w1")
	if ml := must[MyLeases](t)(stranger.MyLeases(ctx)); ml.Success || ml.Code != govern.CodeNotOwner {
		t.Fatalf("a connection without proof: %+v", ml)
	}
	if ml := must[MyLeases](t)(stranger.MyLeases(ctx)); ml.Success {
		t.Fatalf("still without proof: %+v", ml)
	}
	bad := *cl.Fence
	bad.ClaimToken = "stw_ct_" + "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
	if o := must[Outcome](t)(stranger.Heartbeat(ctx, bad)); o.Success || o.Code != govern.CodeNotOwner || o.Attempt != "" {
		t.Fatalf("a wrong token: %+v", o)
	}
	back := f.client("w1")
	var ml MyLeases
	if _, err := back.Call(ctx, ToolMyLeases, SessionArgs{SessionID: "w1", ClaimToken: tok}, &ml); err != nil || !ml.Success || len(ml.Leases) != 1 || ml.Leases[0].Fence == nil {
		t.Fatalf("my_leases with the token from a new connection: %+v %v", ml, err)
	}
	hb := must[Outcome](t)(back.Heartbeat(ctx, *ml.Leases[0].Fence))
	if !hb.Success || hb.Fence.ClaimToken != tok {
		t.Fatalf("heartbeat after the rebind: %+v", hb)
	}
	if o := must[MyLeases](t)(old.MyLeases(ctx)); o.Success {
		t.Fatalf("the old connection still acts as the session: %+v", o)
	}
	if o := must[Outcome](t)(back.Release(ctx, *hb.Fence)); !o.Success {
		t.Fatalf("release: %+v", o)
	}
}
