package govern

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"steward/govern/actionid"
)

// oldAuditLog is an audit log written by steward before the parameters were typed, when a
// request's parameters were a map of strings by name. It was written by this package's own
// fixture (newFixture, withGitea, the clock at leasestest.Now) on the commit before the
// change: issue #1 of acme/widgets got a worker's question and the marker label, the
// maintainer answered "Use **v2**." (an answer, succeeded, whose intent and outcome record
// the inverse clarification.relabel with params {"label": the marker}), and a relabel of the
// item was interrupted after its intent (no outcome).
const oldAuditLog = "testdata/audit_map_params.jsonl"

const oldMarker = "status:blocked-pending-clarification"

// oldAuditWorld makes the Gitea item the old log's records were written about, in the state
// they left it (question asked, answer posted, marker removed), and puts the old log in
// place of the fixture's. It returns the item's number and the old log's bytes.
func oldAuditWorld(t *testing.T, f *fixture) (int64, []byte) {
	t.Helper()
	old, err := os.ReadFile(oldAuditLog)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(old, []byte(`"inverse":{"action":"clarification.relabel","target":{"item":{"remote":"origin","org":"acme","repo":"widgets","kind":"issue","number":1}},"params":{"label":"`+oldMarker+`"}}`)) {
		t.Fatalf("%s does not hold an inverse with map parameters as the old code wrote it", oldAuditLog)
	}
	f.withGitea()
	n := f.repo.CreateIssue("maint", "Which API?", "body")
	f.repo.AddComment("worker", n, "Should this use the v2 API?")
	f.repo.AddLabel("worker", n, oldMarker)
	f.runOK(t, Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: "Use **v2**."}})
	if err := os.WriteFile(f.audit.Path(), old, 0o600); err != nil {
		t.Fatal(err)
	}
	return n, old
}

// TestAuditWrittenWithMapParamsStillReads: records written with map parameters read back
// (no finding), their inverse decoded into the struct its action takes; the JSON form
// writes the same object back; Verify settles the interrupted relabel from Gitea; and undo
// applies the old record's inverse, re-adding the marker.
func TestAuditWrittenWithMapParamsStillReads(t *testing.T) {
	f := newFixture(t, RoleOperator)
	n, old := oldAuditWorld(t, f)
	ctx := context.Background()

	recs, finds, err := ReadAudit(f.audit.Path())
	if err != nil || len(finds) != 0 || len(recs) != 3 {
		t.Fatalf("read: %d records, findings %v, %v", len(recs), finds, err)
	}
	var answer, relabel Attempt
	for _, a := range Attempts(recs) {
		switch a.Intent.Action {
		case actionid.Answer:
			answer = a
		case actionid.Relabel:
			relabel = a
		}
	}
	if answer.Status() != ResultSucceeded || answer.Outcome.Inverse == nil || !relabel.Unresolved() {
		t.Fatalf("attempts: answer %+v, relabel %+v", answer, relabel)
	}
	inv := *answer.Outcome.Inverse
	if want := (RelabelParams{Label: oldMarker}); inv.Action != actionid.Relabel || inv.Params != Params(want) {
		t.Fatalf("the old inverse decoded to %s %#v, want %#v", inv.Action, inv.Params, want)
	}
	// Written again, the inverse is the same JSON the old code wrote.
	b, err := json.Marshal(inv)
	if err != nil || !bytes.Contains(old, b) {
		t.Fatalf("the inverse re-encodes as %s (%v), not as the old log holds it", b, err)
	}

	vs, err := f.core.Verify(ctx)
	if err != nil || len(vs) != 1 || vs[0].Attempt != relabel.ID || vs[0].Result != ResultFailed {
		t.Fatalf("verify: %+v %v", vs, err)
	}

	pv, u, err := f.core.Run(ctx, Request{Action: actionid.Undo, Target: Target{Attempt: answer.ID}}, "")
	if err != nil || u.Result != ResultSucceeded {
		t.Fatalf("undo of the old answer: %+v %+v %v", pv.Refusal, u, err)
	}
	if !slices.Contains(pv.Effects, "add label "+oldMarker+" to acme/widgets#1 (the item waits for a maintainer again)") {
		t.Fatalf("undo preview effects: %q", pv.Effects)
	}
	is, _ := f.ws.Gitea.GetIssue(ctx, n)
	if !is.HasLabel(oldMarker) {
		t.Fatalf("the marker was not re-added: %v", is.Labels)
	}
	recs, finds, _ = ReadAudit(f.audit.Path())
	if len(finds) != 0 || !bytes.HasPrefix(mustRead(t, f.audit.Path()), old) {
		t.Fatalf("the old records changed or a finding appeared: %v", finds)
	}
	if a := Attempts(recs); a[len(a)-1].Status() != ResultSucceeded || a[len(a)-1].Intent.Action != actionid.Undo {
		t.Fatalf("the undo's attempt: %+v", a[len(a)-1])
	}
}

// TestEveryParameterHasALimit: the parameter structs and the table of argument limits name
// the same parameters — a field added without a limit, or a limit no action takes, fails.
func TestEveryParameterHasALimit(t *testing.T) {
	taken := map[string]bool{}
	for _, id := range actionid.All() {
		for _, n := range ParamNames(id) {
			taken[n] = true
			if _, ok := LimitOf(n); !ok {
				t.Errorf("%s takes %q, which has no row in argLimits", id, n)
			}
		}
	}
	for _, l := range ArgLimits() {
		if !strings.HasPrefix(l.Name, "target.") && !taken[l.Name] {
			t.Errorf("argLimits names %q, which no action takes", l.Name)
		}
	}
}

// TestParamsTableNamesKnownActions: every action the table gives parameters is registered,
// and each struct's fields are all tagged strings (what pairs and DecodeParams read).
func TestParamsTableNamesKnownActions(t *testing.T) {
	for id, p := range paramsTable {
		if !slices.Contains(actionid.All(), id) {
			t.Errorf("paramsTable names %q, not an action id", id)
		}
		var check func(reflect.Type)
		check = func(ty reflect.Type) {
			for i := range ty.NumField() {
				fl := ty.Field(i)
				switch {
				case fl.Anonymous && fl.Type.Kind() == reflect.Struct:
					check(fl.Type)
				case fl.Tag.Get("param") == "" || fl.Type.Kind() != reflect.String:
					t.Errorf("%s: field %s of %s is not a tagged string parameter", id, fl.Name, ty)
				}
			}
		}
		check(reflect.TypeOf(p))
	}
}

// TestParamsRoundTrip: a request's parameters written as JSON and read back are the same
// struct, for every action that takes parameters (the claim token aside: it is redacted).
func TestParamsRoundTrip(t *testing.T) {
	for id := range paramsTable {
		m := map[string]string{}
		for i, n := range ParamNames(id) {
			if n != "claim_token" {
				m[n] = strings.Repeat("v", i+1)
			}
		}
		p, err := DecodeParams(id, m)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(Request{Action: id, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		var back Request
		if err := json.Unmarshal(b, &back); err != nil || back.Params != p {
			t.Errorf("%s: %s read back as %#v (%v), want %#v", id, b, back.Params, err, p)
		}
	}
}

// FuzzRequestJSON: any bytes read as a request (an audit record's inverse or step) either
// fail to decode or give a request whose parameters are its action's struct or
// unknownParams, which the core's check judges without panicking, and whose JSON form reads
// back to the same request.
func FuzzRequestJSON(f *testing.F) {
	f.Add([]byte(`{"action":"clarification.relabel","target":{"item":{"org":"acme","repo":"widgets","number":1}},"params":{"label":"x"}}`))
	f.Add([]byte(`{"action":"worker.claim","target":{},"params":{"profle":"typo","pid":"1"}}`))
	f.Add([]byte(`{"action":"worker.heartbeat","params":{"expect_expires_at":"t","caller_pid":"2"}}`))
	f.Add([]byte(`{"action":"lease.reclaim-expired","params":{"label":"x"}}`))
	f.Add([]byte(`{"action":"nope","params":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var r Request
		if json.Unmarshal(b, &r) != nil {
			return
		}
		switch r.Params.(type) {
		case nil, unknownParams:
		default:
			if reflect.TypeOf(paramsTable[r.Action]) != reflect.TypeOf(r.Params) {
				t.Fatalf("%s decoded into %T", r.Action, r.Params)
			}
		}
		_ = checkParams(r)
		if _, ok := r.Params.(unknownParams); ok {
			return
		}
		out, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Request
		if err := json.Unmarshal(out, &back); err != nil || !reflect.DeepEqual(withValues(r.Params, redactToken), back.Params) {
			t.Fatalf("%s → %s → %#v (%v)", b, out, back.Params, err)
		}
	})
}

// redactToken is what the JSON form does to a claim token.
func redactToken(name, v string) string {
	if name == "claim_token" {
		return redacted
	}
	return v
}
