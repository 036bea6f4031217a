package lockrec

import "testing"

// An archived lock's steward_recovery block reads back with what Archive wrote into it; a
// block that is not an object, or whose fields have the wrong types, does not read
// (types.go:234).
func TestStewardRecoveryBlockReadsBackOnlyWhenItDecodes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, block string
		ok          bool
	}{
		{"whole", `{"action":"retire_lock","action_id":"a-1","audit_attempt_id":"att-9",` +
			`"actor":{"login":"op","os_user":"u","host":"h"},"reason":"dead owner","evidence":{"pid":12},` +
			`"archived_at":"2026-07-24T06:00:00Z","live_name":"prgs-o-r-7.json","prior_generation":3,` +
			`"prior_task_session_id":"tsid-1"}`, true},
		{"empty object", `{}`, true},
		{"wrong-typed generation", `{"action":"retire_lock","prior_generation":"3"}`, false},
		{"not an object", `["retire_lock"]`, false},
		{"null", `null`, false},
	} {
		rec, _ := Decode([]byte(`{"issue_number":7,"steward_recovery":` + c.block + `}`))
		b, ok := rec.Recovery()
		if ok != c.ok {
			t.Errorf("%s: read %v, want %v (%+v)", c.name, ok, c.ok, b)
			continue
		}
		if c.name == "whole" && (b.Action != "retire_lock" || b.ActionID != "a-1" || b.AuditAttemptID != "att-9" ||
			b.Actor != (Actor{Login: "op", OSUser: "u", Host: "h"}) || b.Reason != "dead owner" ||
			string(b.Evidence) != `{"pid":12}` || b.ArchivedAt != "2026-07-24T06:00:00Z" ||
			b.LiveName != "prgs-o-r-7.json" || b.PriorGeneration != 3 || b.PriorTaskSessionID != "tsid-1") {
			t.Errorf("whole block read as %+v", b)
		}
	}
}
