package govern

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"steward/govern/actionid"
	"strconv"
	"strings"
	"testing"
)

// everyByte is every byte steward wrote for the fixture: the lock directory (live and
// retired), the DB directory (file and WAL) and the audit log.
func (f *fixture) everyByte() string {
	f.t.Helper()
	var b strings.Builder
	for _, root := range []string{f.ws.LocksDir, filepath.Dir(f.ws.DBPath), filepath.Dir(f.audit.Path())} {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				b.Write(data)
			}
			return nil
		})
	}
	return b.String()
}

// TestClaimTokenProvesOwnership holds the identity model of worker actions, on both
// backends: a claim bound to a claim token keeps only the token's hash, with its lease row;
// a heartbeat, release or ask of that lease must present the token (or come from the
// lease's own process, as its transport proves it), and a core made WithOwnerProof asks
// the same of every lease. A wrong token, or a proven process other than the lease's, is
// refused not_owner — audited, nothing else written.
func TestClaimTokenProvesOwnership(t *testing.T) {
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) {
			f := newFixtureOn(t, RoleOperator, backend)
			ctx := context.Background()
			tok := NewClaimToken()
			if !ValidClaimToken(tok) || len(tok) < len(claimTokenPrefix)+43 || tok == NewClaimToken() {
				t.Fatalf("token %q", tok)
			}
			pid := strconv.Itoa(os.Getpid())
			claim := func(n int64, session string, params ClaimParams) Outcome {
				t.Helper()
				_, out, err := f.core.ForSession(session).Run(ctx, Request{Action: actionid.Claim, Target: Target{Item: item(n), Session: session}, Params: params}, "")
				if err != nil || out.Result != ResultSucceeded {
					t.Fatalf("claim: %+v %v", out, err)
				}
				return out
			}
			own := func(c *Core, action string, out Outcome, session string, proof OwnerProof) Outcome {
				t.Helper()
				p := OwnLeaseParams{HeldFence: HeldFence{ExpiresAt: out.Detail["expires_at"]}, OwnerProof: proof}
				_, o, err := c.ForSession(session).Run(ctx, Request{Action: action, Target: Target{LeaseID: out.Detail["lease_id"], Session: session}, Params: p}, "")
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			refusedNotOwner := func(what string, o Outcome) {
				t.Helper()
				if o.Result != ResultRefused || o.Code != CodeNotOwner || strings.Contains(o.Message, tok) {
					t.Fatalf("%s: %+v, want not_owner", what, o)
				}
			}

			withTok := claim(1, "s1", ClaimParams{ClaimToken: tok, PID: pid})
			l := f.lease(withTok.Detail["lease_id"])
			if got := LeaseTokenHash(l); got != ClaimTokenHash(tok) || got == tok {
				t.Fatalf("the lease records %q, want the token's SHA-256", got)
			}
			if strings.Contains(f.everyByte(), tok) {
				t.Fatal("the token is stored somewhere (DB, lock or audit log), not only its hash")
			}
			before := f.sourcesState()
			refusedNotOwner("heartbeat without proof", own(f.core, actionid.Heartbeat, withTok, "s1", OwnerProof{}))
			refusedNotOwner("heartbeat with a wrong token", own(f.core, actionid.Heartbeat, withTok, "s1", OwnerProof{ClaimToken: NewClaimToken()}))
			refusedNotOwner("release with a malformed token", own(f.core, actionid.Release, withTok, "s1", OwnerProof{ClaimToken: "guess"}))
			refusedNotOwner("heartbeat from another process, with the token", own(f.core, actionid.Heartbeat, withTok, "s1", OwnerProof{ClaimToken: tok, CallerPID: "4242"}))
			refusedNotOwner("another session with the token", own(f.core, actionid.Release, withTok, "s2", OwnerProof{ClaimToken: tok}))
			if after := f.sourcesState(); after != before {
				t.Fatalf("a refusal wrote:\n%s\n%s", before, after)
			}
			hb := own(f.core, actionid.Heartbeat, withTok, "s1", OwnerProof{ClaimToken: tok})
			if hb.Result != ResultSucceeded {
				t.Fatalf("heartbeat with the token: %+v", hb)
			}
			if hb2 := own(f.core, actionid.Heartbeat, hb, "s1", OwnerProof{CallerPID: pid}); hb2.Result != ResultSucceeded {
				t.Fatalf("heartbeat from the lease's own process, without the token: %+v", hb2)
			} else {
				hb = hb2
			}

			// A lease claimed without a token (the command line's) acts as before on a plain
			// core, and needs proof on a core that asks for it.
			plain := claim(2, "s1", ClaimParams{PID: pid})
			proof := f.core.WithOwnerProof()
			refusedNotOwner("no proof on a proving core", own(proof, actionid.Heartbeat, plain, "s1", OwnerProof{}))
			refusedNotOwner("a token for a lease claimed without one", own(proof, actionid.Heartbeat, plain, "s1", OwnerProof{ClaimToken: tok}))
			if o := own(proof, actionid.Heartbeat, plain, "s1", OwnerProof{CallerPID: pid}); o.Result != ResultSucceeded {
				t.Fatalf("the lease's own process on a proving core: %+v", o)
			} else {
				plain = o
			}
			if o := own(f.core, actionid.Heartbeat, plain, "s1", OwnerProof{}); o.Result != ResultSucceeded {
				t.Fatalf("a lease without a token on the command line's core: %+v", o)
			}
			if o := own(f.core, actionid.Release, hb, "s1", OwnerProof{ClaimToken: tok}); o.Result != ResultSucceeded {
				t.Fatalf("release with the token: %+v", o)
			}
			if strings.Contains(f.everyByte(), tok) {
				t.Fatal("the token reached a file")
			}
		})
	}
}

// TestClaimTokenRefusals: a malformed token is refused before anything is written, and a
// DB whose leases keep no provenance cannot bind a claim to a token — refused
// schema_unsupported, never a claim no one could prove later.
func TestClaimTokenRefusals(t *testing.T) {
	f := newFixture(t, RoleOperator)
	ctx := context.Background()
	before := f.state()
	pv, err := f.core.Preview(ctx, Request{Action: actionid.Claim, Target: Target{Item: item(1), Session: "s1"}, Params: ClaimParams{ClaimToken: "stw_ct_short"}})
	if err != nil || pv.Allowed || pv.Refusal.Code != CodeInvalidRequest || strings.Contains(pv.Refusal.Message, "stw_ct_short") {
		t.Fatalf("%+v %v", pv.Refusal, err)
	}
	if after := f.state(); after != before {
		t.Fatal("the refused preview wrote")
	}
	f.exec(`ALTER TABLE leases DROP COLUMN provenance_json`)
	before = f.sourcesState()
	_, out, err := f.core.Run(ctx, Request{Action: actionid.Claim, Target: Target{Item: item(1), Session: "s1"}, Params: ClaimParams{ClaimToken: NewClaimToken()}}, "")
	if err != nil || out.Result != ResultRefused || out.Code != "schema_unsupported" || !strings.Contains(out.Message, "provenance_json") {
		t.Fatalf("%+v %v", out, err)
	}
	if after := f.sourcesState(); after != before {
		t.Fatalf("the refused claim wrote:\n%s\n%s", before, after)
	}
}

// TestClaimTokenIsRedacted: a request's JSON form (a preview printed with --json, a plan's
// recorded steps) and every audited string show a claim token as [redacted].
func TestClaimTokenIsRedacted(t *testing.T) {
	tok := NewClaimToken()
	req := Request{Action: actionid.Heartbeat, Target: Target{LeaseID: "l"}, Params: OwnLeaseParams{HeldFence: HeldFence{ExpiresAt: "x"}, OwnerProof: OwnerProof{ClaimToken: tok}}}
	b, err := json.Marshal(Preview{Request: req})
	if err != nil || strings.Contains(string(b), tok) || !strings.Contains(string(b), `"claim_token":"[redacted]"`) || !strings.Contains(string(b), `"expect_expires_at":"x"`) {
		t.Fatalf("%s %v", b, err)
	}
	if paramsFor[OwnLeaseParams](req).ClaimToken != tok {
		t.Fatal("marshalling changed the request")
	}
	r := NewRedactor()
	for _, s := range []string{"a worker pasted " + tok + " here", "claim_token=" + tok[:20], `{"claim_token": "whatever-it-is"}`} {
		if got := r.String(s); strings.Contains(got, tok[:20]) || strings.Contains(got, "whatever-it-is") || !strings.Contains(got, "[redacted]") {
			t.Errorf("%q → %q", s, got)
		}
	}
	f := newFixture(t, RoleOperator)
	rec := Record{Attempt: "att-1", Kind: KindOutcome, Action: actionid.Heartbeat, Result: ResultRefused, Message: "echo " + tok, Evidence: []string{tok}}
	if err := f.audit.Append(rec); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(f.audit.Path()); strings.Contains(string(data), tok) {
		t.Fatal("the audit log holds the token")
	}
}
