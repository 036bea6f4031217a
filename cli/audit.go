package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/govern"
	"steward/govern/actionid"
	"steward/termsafe"
)

func addAuditCommands(root *cobra.Command, g *globals) {
	var f auditFilter
	audit := &cobra.Command{
		Use: "audit",
		Short: "Show steward's audit log: every attempt with its target and outcome (filters: --item, --actor, --action, " +
			"--result, --since)",
		Long: `Show steward's audit log: every attempt, newest last, with its target (item, lease, lock
file, session) and its result. Heartbeats are folded into one line per item with their count
unless --heartbeats is given. The last line says how many attempts are shown of how many.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.parse(time.Now()); err != nil {
				return &exitError{code: ExitError, msg: err.Error()}
			}
			recs, finds, err := govern.ReadAudit(g.audit)
			if err != nil {
				return err
			}
			all := govern.Attempts(recs)
			shown, folded := f.apply(all)
			if shown == nil {
				shown = []govern.Attempt{} // a list is [] when empty, never null
			}
			view := auditView{shown, folded, len(shown), len(all), finds}
			return printOut(
				cmd.OutOrStdout(),
				g.jsonOut,
				view,
				func(w io.Writer) { writeAttempts(w, shown, folded, len(all), f, finds) },
			)
		},
	}
	fl := audit.Flags()
	fl.StringVar(&f.item, "item", "", "only attempts on this item (ORG/REPO#N, or ORG/REPO!N for a pull request)")
	fl.StringVar(&f.actor, "actor", "", "only attempts by this actor (Gitea login, worker session or OS user)")
	fl.StringVar(
		&f.action,
		"action",
		"",
		"only this action (an action id such as lease.reclaim-expired, or a prefix such as lease.)",
	)
	fl.StringVar(&f.result, "result", "", "only this result: succeeded, refused, failed or unknown")
	fl.StringVar(&f.since, "since", "", "only attempts since then: a duration ago (90m, 24h) or an RFC 3339 time")
	fl.BoolVar(&f.heartbeats, "heartbeats", false, "list heartbeats one by one instead of a count per item")
	verify := &cobra.Command{
		Use:   "verify",
		Short: "Settle unknown outcomes from evidence read back from the sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, done, err := g.core()
			if err != nil {
				return err
			}
			defer done()
			res, err := c.Verify(cmd.Context())
			if err != nil {
				return err
			}
			if res == nil {
				res = []govern.Verification{} // [] when there is nothing to verify, never null
			}
			return printOut(cmd.OutOrStdout(), g.jsonOut, res, func(w io.Writer) {
				for _, v := range res {
					fmt.Fprintf(w, "%s  %s  %s\n", v.Attempt, v.Result, termsafe.Line(v.Note))
					// What was read back: for an attempt left unknown, what is there and what
					// finishes it.
					for _, e := range v.Evidence {
						fmt.Fprintf(w, "  - %s\n", termsafe.Line(e))
					}
				}
				if len(res) == 0 {
					fmt.Fprintln(w, "no unknown outcomes to verify")
				}
			})
		},
	}
	var attempt, result, note string
	resolve := &cobra.Command{
		Use:   "resolve",
		Short: "Record a human's resolution of an unknown outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, done, err := g.core()
			if err != nil {
				return err
			}
			defer done()
			if err := c.ResolveByHuman(attempt, govern.Result(result), note); err != nil {
				return &exitError{code: ExitRefused, msg: err.Error()}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s resolved as %s by a human\n", attempt, result)
			return nil
		},
	}
	resolve.Flags().StringVar(&attempt, "attempt", "", "the unknown attempt")
	resolve.Flags().StringVar(&result, "result", "", "succeeded or failed")
	resolve.Flags().StringVar(&note, "note", "", "what you checked")
	_ = resolve.MarkFlagRequired("attempt")
	_ = resolve.MarkFlagRequired("result")
	audit.AddCommand(verify, resolve)
	root.AddCommand(audit)
}

// auditFilter is what `steward audit` shows.
type auditFilter struct {
	item, actor, action, result, since string
	heartbeats                         bool
	it                                 *govern.Item
	from                               time.Time
}

// heartbeatCount is the heartbeats of one item, folded into one line.
type heartbeatCount struct {
	Target string `json:"target"`
	Count  int    `json:"count"`
	Last   string `json:"last_at"`
}

func (f *auditFilter) parse(now time.Time) error {
	if f.item != "" {
		it, err := parseItemRef(f.item)
		if err != nil {
			return err
		}
		f.it = &it
	}
	switch govern.Result(f.result) {
	case "", govern.ResultSucceeded, govern.ResultRefused, govern.ResultFailed, govern.ResultUnknown:
	default:
		return fmt.Errorf("--result %q is not a result: use succeeded, refused, failed or unknown", clipArg(f.result))
	}
	if f.since != "" {
		if d, err := time.ParseDuration(f.since); err == nil && d > 0 {
			f.from = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339, f.since); err == nil {
			f.from = t
		} else {
			return fmt.Errorf("--since %q is neither a duration ago (90m, 24h) nor an RFC 3339 time "+
				"(2026-05-04T12:00:00Z)", clipArg(f.since))
		}
	}
	return nil
}

// first is the record an attempt is told by: its outcome, else its intent.
func first(a govern.Attempt) *govern.Record {
	if a.Outcome != nil {
		return a.Outcome
	}
	if a.Intent != nil {
		return a.Intent
	}
	if n := len(a.Resolutions); n > 0 {
		return &a.Resolutions[n-1]
	}
	return nil
}

// apply keeps the attempts the filter names and folds heartbeats into a count per target
// (unless asked for one by one).
func (f *auditFilter) apply(all []govern.Attempt) ([]govern.Attempt, []heartbeatCount) {
	var out []govern.Attempt
	var folded []heartbeatCount
	at := map[string]int{}
	for _, a := range all {
		rec := first(a)
		if rec == nil || !f.keeps(a, rec) {
			continue
		}
		if !f.heartbeats && rec.Action == actionid.Heartbeat {
			k := auditTarget(rec.Target)
			i, ok := at[k]
			if !ok {
				i = len(folded)
				at[k] = i
				folded = append(folded, heartbeatCount{Target: k})
			}
			folded[i].Count++
			folded[i].Last = rec.At
			continue
		}
		out = append(out, a)
	}
	return out, folded
}

func (f *auditFilter) keeps(a govern.Attempt, rec *govern.Record) bool {
	switch {
	case f.it != nil && (rec.Target.Item == nil ||
		!strings.EqualFold(rec.Target.Item.Org, f.it.Org) || !strings.EqualFold(rec.Target.Item.Repo, f.it.Repo) ||
		rec.Target.Item.Number != f.it.Number):
		return false
	case f.actor != "" && f.actor != rec.Actor.Session && f.actor != rec.Actor.GiteaLogin && f.actor != rec.Actor.OSUser:
		return false
	case f.action != "" && rec.Action != f.action &&
		!(strings.HasSuffix(f.action, ".") && strings.HasPrefix(rec.Action, f.action)):
		return false
	case f.result != "" && string(a.Status()) != f.result:
		return false
	}
	if !f.from.IsZero() {
		t, err := time.Parse(time.RFC3339Nano, rec.At)
		if err != nil || t.Before(f.from) {
			return false
		}
	}
	return true
}

// auditTarget names every part of a target: item, lease, lock file, session, attempt.
func auditTarget(t govern.Target) string {
	var parts []string
	if t.Item != nil {
		parts = append(parts, t.Item.String())
	}
	named := [][2]string{{"lease ", t.LeaseID}, {"lock ", t.LockFile}, {"session ", t.Session}, {"attempt ", t.Attempt}}
	for _, kv := range named {
		if kv[1] != "" {
			parts = append(parts, kv[0]+kv[1])
		}
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, " · ")
}

func (f auditFilter) String() string {
	var parts []string
	flags := [][2]string{
		{"item", f.item}, {"actor", f.actor}, {"action", f.action}, {"result", f.result}, {"since", f.since},
	}
	for _, kv := range flags {
		if kv[1] != "" {
			parts = append(parts, "--"+kv[0]+" "+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

func writeAttempts(
	w io.Writer,
	atts []govern.Attempt,
	folded []heartbeatCount,
	total int,
	f auditFilter,
	finds []govern.AuditFinding,
) {
	if len(atts) == 0 && len(folded) == 0 {
		fmt.Fprintln(
			w,
			"no attempts recorded"+map[bool]string{true: " that match " + f.String(), false: ""}[f.String() != ""],
		)
	}
	for _, a := range atts {
		rec := first(a)
		status := string(a.Status())
		if a.Outcome != nil && a.Outcome.Disposition == govern.DispositionPartial {
			status += " (partial)"
		}
		if a.Outcome == nil {
			status += " (no outcome recorded: interrupted or in flight)"
		}
		fmt.Fprintf(w, "%s  %s  %-22s %-34s %-14s %s %s\n", termsafe.Line(rec.At), a.ID, termsafe.Line(rec.Action),
			termsafe.Line(auditTarget(rec.Target)), termsafe.Line(rec.Actor.Name()), status, termsafe.Line(rec.Code))
		for _, s := range a.Steps {
			fmt.Fprintf(
				w,
				"    step  %-22s %-34s %s %s\n",
				termsafe.Line(s.Action),
				termsafe.Line(auditTarget(s.Target)),
				s.Result,
				termsafe.Line(s.Code),
			)
		}
	}
	for _, h := range folded {
		fmt.Fprintf(
			w,
			"%s  heartbeats ×%d on %s (newest shown; --heartbeats lists them)\n",
			termsafe.Line(h.Last),
			h.Count,
			termsafe.Line(h.Target),
		)
	}
	hb := 0
	for _, h := range folded {
		hb += h.Count
	}
	note := fmt.Sprintf("%d of %d attempts shown", len(atts)+hb, total)
	if hb > 0 {
		note += fmt.Sprintf(" (%d heartbeats folded into %d lines)", hb, len(folded))
	}
	if s := f.String(); s != "" {
		note += "; filter: " + s
	}
	fmt.Fprintln(w, note)
	for _, fd := range finds {
		fmt.Fprintf(w, "finding: line %d: %s\n", fd.Line, termsafe.Line(fd.Reason))
	}
}

// auditView is `steward audit --json`.
type auditView struct {
	Attempts   []govern.Attempt      `json:"attempts"`
	Heartbeats []heartbeatCount      `json:"heartbeats,omitempty"`
	Shown      int                   `json:"shown"`
	Total      int                   `json:"total"`
	Findings   []govern.AuditFinding `json:"findings,omitempty"`
}
