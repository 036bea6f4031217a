package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/govern"
	"steward/model"
	"steward/termsafe"
)

// statusFlags are the flags of `steward status`.
type statusFlags struct {
	watch   bool
	noGitea bool
	now     string
	at      string
	window  time.Duration
	failOn  failOn
	all     bool
}

// addStatusCommand adds `steward status [--json] [--watch]`.
func addStatusCommand(root *cobra.Command, g *globals) {
	f := &statusFlags{}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print the live snapshot: sources, claims, contention, clarifications, orphans",
		Long: `status prints the live snapshot of the workspace — the sources' health, claims,
contention, clarifications, orphans — as text, or as JSON with --json (docs/formats.md).
With --watch it prints a snapshot (a JSON line with --json) each time one changes.
--workspace NAME reads one workspace of the config file (the default without it); --all
reads every workspace it lists, each under its name: as text one report per workspace, as
JSON {"workspaces":[{"name":…,"host":…,"snapshot":{…}}, …]} (docs/formats.md).

Exit codes, the same with --json (with --watch, those of the last snapshot printed):
  0  every configured source was read (the lock directory, the DB, and Gitea when a
     repository is configured and --no-gitea is not given)
  5  a configured source is unavailable: nothing can be concluded from it
  6  --fail-on found what it names: human-required (collisions, questions waiting for an
     answer, attempts of unknown outcome in steward's audit log) or attention (those and
     orphans an operator can reconcile — the workbench's attention inbox)
  1  the command could not run (bad flags, a configuration with errors)
5 wins over 6. The reason is printed on stderr. With --all, the worst of every workspace.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runStatus(cmd.Context(), cmd.OutOrStdout(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.watch, "watch", false, "keep watching; print a snapshot (a JSON line with --json) per change")
	fl.BoolVar(&f.noGitea, "no-gitea", false, "do not read Gitea")
	fl.StringVar(&f.now, "now", "", "classify at this RFC 3339 instant instead of the clock (reproducible output)")
	fl.StringVar(
		&f.at,
		"at",
		"",
		"the fleet at a past moment, reconstructed from the evidence: RFC 3339, or a duration back (2h)",
	)
	fl.DurationVar(
		&f.window,
		"window",
		15*time.Minute,
		"with --at: the window before it whose refused claims count as contention",
	)
	fl.BoolVar(
		&f.all,
		"all",
		false,
		"report every workspace of the config file, each under its name (not with --watch or --at)",
	)
	fl.Var(
		&f.failOn,
		"fail-on",
		"exit 6 when the snapshot holds this: human-required or attention (see the exit codes above)",
	)
	root.AddCommand(cmd)
}

func runStatus(ctx context.Context, out io.Writer, g *globals, f *statusFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	// No --now: every verdict at the control-plane DB's clock where there is one
	// (PostgreSQL), else at this host's (app.Settings.Now nil).
	var clock func() time.Time
	if f.now != "" {
		t, err := time.Parse(time.RFC3339, f.now)
		if err != nil {
			return &exitError{
				code: ExitError,
				msg:  fmt.Sprintf("--now %q is not a time: use RFC 3339, such as 2026-07-23T10:00:00Z", clipArg(f.now)),
			}
		}
		clock = func() time.Time { return t }
	}
	if f.at != "" {
		if f.watch {
			return &exitError{code: ExitError, msg: "--at shows one past moment; it cannot --watch"}
		}
		at := clock
		if at == nil {
			at = time.Now
		}
		return runStatusAt(ctx, out, g, f.at, f.window, at)
	}
	if f.all {
		if f.watch || f.at != "" {
			return &exitError{
				code: ExitError,
				msg:  "--all reports every workspace once; --watch and --at read one (choose it with --workspace)",
			}
		}
		return runStatusAll(ctx, out, g, f, clock)
	}
	// The session's core has no audit log: it previews, for each orphan, whether its
	// action's guards allow it now, and writes nothing.
	st, err := g.settings()
	if err != nil {
		return err
	}
	st.Audit, st.Role, st.Now, st.Gitea.Off, st.Warn = app.AuditNone, govern.RoleViewer, clock, f.noGitea, os.Stderr
	sess, err := app.Open(ctx, st)
	if err != nil {
		return err
	}
	defer sess.Close()
	show := func(s *model.Snapshot) (int, string, error) {
		notes, unknown := unsettled(g.audit)
		if err := printSnapshot(out, sess.Secrets.Snapshot(withNotes(s, notes)), g.jsonOut); err != nil {
			return 0, "", err
		}
		code, msg := statusVerdict(s, unknown, f.failOn)
		return code, msg, nil
	}
	if !f.watch && g.jsonOut {
		// The fleet a page of items at a time, when it can (app.Session.StatusJSON).
		notes, unknown := unsettled(g.audit)
		s, ok, err := sess.StatusJSON(ctx, out, notes)
		if err != nil {
			return err
		}
		if ok {
			code, msg := statusVerdict(s, unknown, f.failOn)
			return statusExit(code, msg)
		}
	}
	if !f.watch {
		code, msg, err := show(sess.Snapshot(ctx))
		if err != nil {
			return err
		}
		return statusExit(code, msg)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	if err := sess.Watch(ctx); err != nil {
		return err
	}
	// The exit code is the last printed snapshot's.
	code, msg := ExitOK, ""
	for {
		select {
		case <-ctx.Done():
			return statusExit(code, msg)
		case s, ok := <-sess.Snapshots():
			if !ok {
				return statusExit(code, msg)
			}
			if code, msg, err = show(s); err != nil {
				return err
			}
		}
	}
}

func printSnapshot(out io.Writer, s *model.Snapshot, asJSON bool) error {
	if asJSON {
		// Streamed: at 100,000 claims the document is hundreds of MB, and json.Marshal's
		// buffer grew to about twice that before the first byte was written.
		bw := bufio.NewWriterSize(out, 64<<10)
		if err := s.EncodeJSON(func(b []byte) error { _, err := bw.Write(b); return err }); err != nil {
			return err
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
		return bw.Flush()
	}
	printText(out, s)
	return nil
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	// Durations read as in the workbench (model.Span). t.Sub(now): a far-future time
	// saturates at the largest duration; negating the smallest one would overflow.
	if t.After(now) {
		return "in " + model.Span(t.Sub(now))
	}
	return model.Span(now.Sub(t)) + " ago"
}

// clockNote says, when this host's clock is more than a second off the DB's, that every
// verdict is the DB's clock's and how far this host's is off ("" otherwise).
func clockNote(c model.Clock) string {
	switch {
	case !c.Skewed():
		return ""
	case c.Offset < 0:
		return " (the control-plane DB's clock; this host's is " + model.Span((-c.Offset).Round(time.Second)) + " ahead)"
	}
	return " (the control-plane DB's clock; this host's is " + model.Span(c.Offset.Round(time.Second)) + " behind)"
}

func printText(w io.Writer, s *model.Snapshot) {
	L := termsafe.Line
	now := s.GeneratedAt
	fmt.Fprintf(w, "steward status at %s%s\n\nsources\n", now.UTC().Format(time.RFC3339), clockNote(s.Clock))
	for _, x := range []struct {
		n string
		h model.SourceHealth
	}{{"locks", s.Sources.Locks}, {"db", s.Sources.DB}, {"gitea", s.Sources.Gitea}} {
		line := fmt.Sprintf(
			"  %-6s %-14s scanned %s in %s",
			x.n,
			x.h.Status,
			age(now, x.h.ScannedAt),
			x.h.ScanDuration.Round(time.Microsecond),
		)
		if x.h.Partial {
			line += " (partial inventory)"
		}
		if x.h.Reason != "" {
			line += " — " + L(x.h.Reason)
		}
		fmt.Fprintln(w, line)
		for _, n := range x.h.Notes {
			fmt.Fprintf(w, "         note: %s\n", L(n))
		}
	}
	c := s.Count()
	var bs []string
	for b, n := range c.Buckets {
		bs = append(bs, fmt.Sprintf("%s %d", b, n))
	}
	sort.Strings(bs)
	var omitted string
	if s.SessionsOmitted > 0 {
		omitted = fmt.Sprintf(" (%d older ended not listed)", s.SessionsOmitted)
	}
	items := strings.Join(bs, ", ")
	if items == "" {
		items = "none"
	}
	if inv := s.ItemsInventory; !inv.Complete {
		// What items[] lacks is said, never read as "no other item": the seed's "none found
		// (partial inventory)".
		items += " (" + L(inv.Reason) + ")"
	}
	fmt.Fprintf(
		w,
		"\ncounts: %d claims, %d contention (%d collisions), %d clarifications, %d orphans, %d sessions%s; items: %s\n",
		c.Claims,
		c.Contention,
		c.Collisions,
		c.Clarifications,
		c.Orphans,
		c.Sessions,
		omitted,
		items,
	)
	fmt.Fprintf(w, "\nclaims (%d)\n", len(s.Claims))
	for _, x := range s.Claims {
		who := ""
		if x.Claimant != nil {
			who = x.Claimant.Username + "/" + x.Claimant.Profile
		}
		left := "no expiry"
		if !x.ExpiresAt.IsZero() {
			left = "expires " + age(now, x.ExpiresAt)
		}
		// A field the claim does not have is left out or said so ("no lease"), never
		// printed empty (a legacy lock has no session, phase, freshness or lease).
		var f []string
		if x.SessionID != "" {
			f = append(f, "session "+L(x.SessionID))
		}
		if x.Phase != "" {
			f = append(f, L(x.Phase))
		}
		f = append(f, "heartbeat "+age(now, x.LastHeartbeat), left, "contract "+L(x.Contract))
		if x.Freshness != "" {
			f = append(f, "freshness "+L(x.Freshness))
		}
		f = append(
			f,
			"owner "+L(x.OwnerText()),
			orNone("lock ", L(x.LockFile), "no lock file"),
			orNone("lease ", L(x.LeaseID), "no lease"),
		)
		fmt.Fprintf(w, "  %-22s %-8s %-16s %s\n", L(itemStr(x.Item)), L(x.Role), L(who), strings.Join(f, ", "))
	}
	fmt.Fprintf(w, "\ncontention (%d)\n", len(s.Contention))
	for _, x := range s.Contention {
		extra := ""
		if x.Kind == model.ContentionClaimRefused {
			extra = fmt.Sprintf(" — %d refused in the last %s", x.Count, model.Span(time.Duration(x.WindowS)*time.Second))
		}
		fmt.Fprintf(w, "  %-24s %-22s sessions %s%s\n", x.Kind, L(itemStr(x.Item)), L(strings.Join(x.Sessions, ", ")), extra)
	}
	fmt.Fprintf(w, "\nclarifications (%d)\n", len(s.Clarifications))
	for _, x := range s.Clarifications {
		fmt.Fprintf(
			w,
			"  %-22s asked by %s %s: %s\n",
			L(x.Item.String()),
			L(x.AskedBy),
			age(now, x.AskedAt),
			termsafe.Truncate(L(x.Question), 100),
		)
	}
	fmt.Fprintf(w, "\norphans (%d)\n", len(s.Orphans))
	for _, o := range s.Orphans {
		what := "inspect only: " + L(o.InspectOnlyReason)
		if o.Action != nil {
			what = "action " + o.Action.ID + " (not previewed)"
			if o.Action.Allowed != nil && *o.Action.Allowed {
				what = "action " + o.Action.ID + " (allowed)"
			} else if o.Action.Refusal != nil {
				what = "action " + o.Action.ID + " refused: " + L(o.Action.Refusal.Code)
			}
		}
		target := strings.TrimSpace(L(o.LockFile) + " " + L(o.LeaseID))
		fmt.Fprintf(w, "  %-30s %-22s %s — %s\n", o.Kind, L(itemStr(o.Item)), target, termsafe.Truncate(what, 160))
	}
	for _, f := range s.Findings {
		fmt.Fprintf(w, "note: %s\n", L(f))
	}
}

func itemStr(it *model.Item) string {
	if it == nil {
		return "-"
	}
	return it.String()
}

// orNone is label+v, or none when v is empty.
func orNone(label, v, none string) string {
	if v == "" {
		return none
	}
	return label + v
}
