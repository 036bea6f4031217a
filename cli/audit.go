package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"steward/govern"
	"steward/termsafe"
)

func addAuditCommands(root *cobra.Command, g *globals) {
	audit := &cobra.Command{
		Use:   "audit",
		Short: "Show steward's audit log: every attempt with its outcome",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			recs, finds, err := govern.ReadAudit(g.audit)
			if err != nil {
				return err
			}
			atts := govern.Attempts(recs)
			view := struct {
				Attempts []govern.Attempt      `json:"attempts"`
				Findings []govern.AuditFinding `json:"findings,omitempty"`
			}{atts, finds}
			return printOut(cmd.OutOrStdout(), g.jsonOut, view, func(w io.Writer) { writeAttempts(w, atts, finds) })
		},
	}
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
			return printOut(cmd.OutOrStdout(), g.jsonOut, res, func(w io.Writer) {
				for _, v := range res {
					fmt.Fprintf(w, "%s  %s  %s\n", v.Attempt, v.Result, termsafe.Line(v.Note))
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

func writeAttempts(w io.Writer, atts []govern.Attempt, finds []govern.AuditFinding) {
	if len(atts) == 0 {
		fmt.Fprintln(w, "no attempts recorded")
	}
	for _, a := range atts {
		var action, at, actor, code string
		switch {
		case a.Outcome != nil:
			action, at, actor, code = a.Outcome.Action, a.Outcome.At, a.Outcome.Actor.OSUser, a.Outcome.Code
		case a.Intent != nil:
			action, at, actor = a.Intent.Action, a.Intent.At, a.Intent.Actor.OSUser
		}
		status := string(a.Status())
		if a.Outcome == nil {
			status += " (no outcome recorded: interrupted or in flight)"
		}
		fmt.Fprintf(w, "%s  %s  %-22s %-10s %s %s\n", termsafe.Line(at), a.ID, termsafe.Line(action), termsafe.Line(actor), status, termsafe.Line(code))
	}
	for _, f := range finds {
		fmt.Fprintf(w, "finding: line %d: %s\n", f.Line, termsafe.Line(f.Reason))
	}
}
