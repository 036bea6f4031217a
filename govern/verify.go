package govern

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"steward/leases"
)

// Verification is what the verifier concluded about one unknown attempt.
type Verification struct {
	Attempt string `json:"attempt"`
	Action  string `json:"action"`
	// Result is succeeded or failed when the evidence settled it, unknown when it could not.
	Result   Result   `json:"result"`
	Evidence []string `json:"evidence,omitempty"`
	Note     string   `json:"note"`
}

// Verify settles unknown attempts from evidence read back from the sources. An attempt with
// an intent and no outcome (the process died mid-apply) first gets its missing terminal
// record, unknown with disposition outcome_unknown; then, where the evidence tells, a
// resolution with resolved_by machine. Attempts the evidence cannot settle stay unknown.
// An attempt still being applied (see inflight.go) is left alone. A read-only core
// reports what the evidence says and records nothing.
func (c *Core) Verify(ctx context.Context) ([]Verification, error) {
	if c.audit == nil {
		return nil, errAuditUnavailable
	}
	recs, _, err := ReadAudit(c.audit.Path())
	if err != nil {
		return nil, err
	}
	var out []Verification
	for _, att := range Attempts(recs) {
		if !att.Unresolved() || att.Intent == nil {
			continue
		}
		intent := *att.Intent
		v := Verification{Attempt: att.ID, Action: intent.Action, Result: ResultUnknown}
		if att.Outcome == nil && c.audit.inFlight(att.ID) {
			v.Note = "still being applied by a running steward on this host; it is left alone — verify again once it ends"
			out = append(out, v)
			continue
		}
		if att.Outcome == nil {
			rec := intent
			rec.At, rec.Kind, rec.Result, rec.Disposition = stamp(c.now()), KindOutcome, ResultUnknown, DispositionOutcomeUnknown
			rec.Message = "the attempt was interrupted after its intent was recorded; no outcome was written. It may have " +
				"taken effect — verify before retrying."
			rec.Effects, rec.Evidence, rec.Inverse = nil, nil, nil
			if err := c.record(rec); err != nil {
				return out, err
			}
		}
		if bs, err := c.pendingOnDB(ctx, att.ID); err == nil && len(bs) > 0 {
			// Its absence from the DB proves nothing yet: the server may still commit it.
			v.Note = pendingNote(bs)
			out = append(out, v)
			continue
		}
		a, ok := c.actions[intent.Action]
		if !ok {
			v.Note = "no verifier for this action; resolve it by hand with `steward audit resolve`"
			out = append(out, v)
			continue
		}
		res, ev, ok := a.verify(ctx, c, intent)
		v.Evidence = ev
		if !ok {
			v.Note = "the evidence does not settle it; it stays unknown"
			out = append(out, v)
			continue
		}
		v.Result = res
		v.Note = "settled from evidence read back from the source"
		if c.readOnly {
			v.Note += " (read-only: not recorded in the audit log)"
		}
		rec := intent
		rec.At, rec.Kind, rec.Result, rec.ResolvedBy = stamp(c.now()), kindResolution, res, ResolvedByMachine
		rec.Evidence, rec.Effects, rec.Fences, rec.Inverse = ev, nil, nil, nil
		rec.Message = "resolved from evidence: " + strings.Join(ev, "; ")
		if res == ResultSucceeded {
			rec.Inverse = intent.Inverse
		}
		if err := c.record(rec); err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// record appends a verifier's record, unless the core is read-only: then Verify reports
// what the evidence says and writes nothing.
func (c *Core) record(rec Record) error {
	if c.readOnly {
		return nil
	}
	return c.audit.Append(rec)
}

// ResolveByHuman records a person's judgement of an unknown attempt: succeeded or failed.
func (c *Core) ResolveByHuman(attempt string, res Result, note string) error {
	if res != ResultSucceeded && res != ResultFailed {
		return fmt.Errorf("a resolution is succeeded or failed, not %q", res)
	}
	if c.actor.Role < RoleOperator {
		return fmt.Errorf("resolving an unknown outcome needs role operator or above; you hold %s", c.actor.Role)
	}
	if c.readOnly {
		return errors.New("a resolution is not recorded: " + c.readOnlyMessage())
	}
	if c.audit == nil {
		return errAuditUnavailable
	}
	recs, _, err := ReadAudit(c.audit.Path())
	if err != nil {
		return err
	}
	for _, att := range Attempts(recs) {
		if att.ID != attempt {
			continue
		}
		if !att.Unresolved() {
			return fmt.Errorf("attempt %s is not unknown (it is %s); nothing to resolve", attempt, att.Status())
		}
		if att.Outcome == nil && c.audit.inFlight(att.ID) {
			return fmt.Errorf(
				"attempt %s is still being applied by a running steward on this host; wait for its outcome",
				attempt,
			)
		}
		base := att.Intent
		if base == nil {
			base = att.Outcome
		}
		rec := *base
		rec.At, rec.Kind, rec.Result, rec.ResolvedBy, rec.Actor = stamp(
			c.now(),
		), kindResolution, res, ResolvedByHuman, c.actor
		rec.Message = Cap("resolved by a human: " + note)
		rec.Effects, rec.Fences, rec.Evidence = nil, nil, nil
		if res != ResultSucceeded {
			rec.Inverse = nil
		}
		return c.audit.Append(rec)
	}
	return fmt.Errorf("no attempt %s in the audit log", attempt)
}

// pendingNote says why an attempt whose transaction the database is still running is left
// alone, and how that transaction can be ended.
func pendingNote(bs []leases.Backend) string {
	b := bs[0]
	state := b.State
	if state == "" {
		state = "in a transaction"
	}
	return fmt.Sprintf(
		"the control-plane DB is still running this attempt's transaction (server process %d, %s since %s): "+
			"its COMMIT may still land, so it is left alone — verify again once it ends. Ending that process "+
			"(SELECT pg_terminate_backend(%d)) rolls back a transaction still waiting for its COMMIT",
		b.PID,
		state,
		stamp(b.Since),
		b.PID,
	)
}
