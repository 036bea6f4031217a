package govern

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/govern/actionid"
)

// TestSuccessSaysItsOutcomeWentUnrecorded: the audit log takes an attempt's intent and then
// refuses its outcome record (closed under the apply). A change that was made says so — the
// caller must learn the log lacks it — while a refusal, which changed nothing, does not
// (core.go:353).
func TestSuccessSaysItsOutcomeWentUnrecorded(t *testing.T) {
	const note = "(the outcome record could not be written:"
	cases := []struct {
		desc   string
		move   func(t *testing.T, f *fixture, name string) // after the intent, before the action writes
		result Result
		noted  bool
	}{
		{"the retire goes through", func(*testing.T, *fixture, string) {}, ResultSucceeded, true},
		{"the lock was released meanwhile", func(t *testing.T, f *fixture, name string) {
			if err := os.Remove(filepath.Join(f.ws.LocksDir, name)); err != nil {
				t.Fatal(err)
			}
		}, ResultRefused, false},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			name := f.lockFile(4, -time.Minute, deadPID(t))
			log, err := OpenAudit(f.audit.Path(), nil)
			if err != nil {
				t.Fatal(err)
			}
			c := New(f.ws, log, Options{Actor: f.core.actor, Now: f.clock.Now, Step: func(step string) {
				if step == "intent-written" {
					if err := log.Close(); err != nil {
						t.Fatal(err)
					}
					tc.move(t, f, name)
				}
			}})
			defer c.Close()
			pv, err := c.Preview(context.Background(), Request{Action: actionid.RetireLock, Target: Target{LockFile: name}})
			if err != nil || !pv.Allowed {
				t.Fatalf("preview: %+v %v", pv.Refusal, err)
			}
			out := c.Apply(context.Background(), pv, pv.ConfirmPhrase)
			if out.Result != tc.result {
				t.Fatalf("outcome %+v, want %s", out, tc.result)
			}
			if got := strings.Contains(out.Message, note); got != tc.noted {
				t.Errorf("message %q: says the outcome went unrecorded = %v, want %v", out.Message, got, tc.noted)
			}
			recs, _, err := ReadAudit(f.audit.Path())
			if err != nil || len(recs) != 1 || recs[0].Kind == KindOutcome {
				t.Errorf("audit log: %d records %v; want the intent alone", len(recs), err)
			}
		})
	}
}
