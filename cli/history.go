package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/config"
	"steward/govern"
	"steward/history"
	"steward/history/gather"
	"steward/leases"
	"steward/termsafe"
)

// historyFlags are the flags of `steward history`.
type historyFlags struct {
	item, session string
	since, until  string
	left          bool
	keepMark      bool
	heat          bool
	window        time.Duration
	now           string
	stateDir      string
}

// defaultStateDir is steward's own state directory ($XDG_STATE_HOME/steward).
func defaultStateDir() string {
	return envOr(
		"STEWARD_STATE_DIR",
		filepath.Join(envOr("XDG_STATE_HOME", filepath.Join(home(), ".local", "state")), "steward"),
	)
}

// addHistoryCommand adds `steward history` (alias `timeline`).
func addHistoryCommand(root *cobra.Command, g *globals) {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:     "history",
		Aliases: []string{"timeline"},
		Short:   "What happened: an item's or a worker's timeline, since you left, contention (read-only)",
		Long: `Merge the control-plane events, the lease rows, the lock generations (live and retired/),
steward's audit log and (for one item) its Gitea comments and labels into one timeline, each
line naming its source. Where evidence is missing the output says so as a gap.

  steward history --item acme/widgets#7        one item's timeline
  steward history --session s-42               one worker's timeline
  steward history --since 2h                   everything in the last two hours
  steward history --since-left                 what changed since you last looked (then marks now)
  steward history --heat --window 1h           who fights over what in the last hour

See docs/history.md for what can and cannot be reconstructed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runHistory(cmd.Context(), cmd.OutOrStdout(), g, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.item, "item", "", "one item's timeline: ORG/REPO#N")
	fl.StringVar(&f.session, "session", "", "one worker session's timeline")
	fl.StringVar(&f.since, "since", "", "from this instant: RFC 3339, or a duration back from now (2h, 90m)")
	fl.StringVar(&f.until, "until", "", "up to this instant (same forms as --since)")
	fl.BoolVar(&f.left, "since-left", false, "what changed since you last looked (your last-seen mark), then mark now")
	fl.BoolVar(&f.keepMark, "keep-mark", false, "with --since-left: do not move the last-seen mark")
	fl.BoolVar(&f.heat, "heat", false, "the contention heatmap: sessions × items over --window")
	fl.DurationVar(&f.window, "window", time.Hour, "the heatmap's window (15m … 24h)")
	fl.StringVar(&f.now, "now", "", "read as of this RFC 3339 instant instead of the clock (reproducible output)")
	fl.StringVar(
		&f.stateDir,
		"state-dir",
		defaultStateDir(),
		"steward's own state directory (the last-seen mark lives under seen/)",
	)
	root.AddCommand(cmd)
}

// parseInstant reads RFC 3339, or a duration meaning that long before now ("2h", "-2h").
func parseInstant(flag, v string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t.UTC(), nil
	}
	if d, err := time.ParseDuration(strings.TrimPrefix(v, "-")); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, &exitError{
		code: ExitError,
		msg: fmt.Sprintf(
			"--%s %q is not a time: use RFC 3339 (2026-07-23T10:00:00Z) or a duration back from now (90m, 2h)",
			flag,
			clipArg(v),
		),
	}
}

func (g *globals) historySources() gather.Sources {
	src := gather.Sources{
		LocksDir:  g.locksDir,
		DB:        leases.Target{Loc: g.dbPath, PasswordFile: g.dbPasswordFile},
		AuditPath: g.audit,
	}
	if g.resolved != nil {
		// A workspace whose lock directory is on another host: not read from here.
		src.LocksNotObserved = app.LocksNotObserved(g.resolved.Get(config.KeyHost).Value, time.Now())
	}
	return src
}

func clockOf(now string) (func() time.Time, error) {
	if now == "" {
		return time.Now, nil
	}
	t, err := time.Parse(time.RFC3339, now)
	if err != nil {
		return nil, &exitError{
			code: ExitError,
			msg:  fmt.Sprintf("--now %q is not a time: use RFC 3339, such as 2026-07-23T10:00:00Z", clipArg(now)),
		}
	}
	return func() time.Time { return t }, nil
}

func runHistory(ctx context.Context, out io.Writer, g *globals, f *historyFlags) error {
	if ctx == nil {
		ctx = context.Background()
	}
	clock, err := clockOf(f.now)
	if err != nil {
		return err
	}
	now := clock().UTC()
	var filt history.Filter
	if f.item != "" {
		it, err := history.ParseItem(f.item)
		if err != nil {
			return &exitError{code: ExitError, msg: "--item: " + err.Error()}
		}
		filt.Item = it
	}
	filt.Session = f.session
	if f.since != "" {
		if filt.Since, err = parseInstant("since", f.since, now); err != nil {
			return err
		}
	}
	if f.until != "" {
		if filt.Until, err = parseInstant("until", f.until, now); err != nil {
			return err
		}
	}
	if f.heat && (f.window < 15*time.Minute || f.window > 24*time.Hour) {
		return &exitError{code: ExitError, msg: fmt.Sprintf("--window %s is outside 15m … 24h", f.window)}
	}
	src := g.historySources()
	if !filt.Item.Zero() {
		cl, err := g.giteaClient(os.Stderr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "warning: Gitea not read:", termsafe.Line(err.Error()))
		} else {
			src.Gitea = cl
		}
	}
	ev := gather.Read(ctx, src, gather.Options{Item: filt.Item, Now: clock})
	var err2 error
	switch {
	case f.heat:
		h := ev.Heat(now.Add(-f.window), now)
		err2 = emit(out, g.jsonOut, h, func() { printHeat(out, h) })
	case f.left:
		err2 = runSinceLeft(out, g, f, ev, src, now)
	default:
		tl := ev.Timeline(filt)
		err2 = emit(out, g.jsonOut, tl, func() { printTimeline(out, tl) })
	}
	if err2 != nil {
		return err2
	}
	return nothingRead("history", ev)
}

// nothingRead is exit 5 (as `steward status`'s) when not one of the supervised system's
// sources — the control plane's events and lease rows, the lock directory — could be read:
// what was printed is then gaps and steward's own audit log at most, and a script must not
// read it as "nothing happened". Its reasons go to stderr.
func nothingRead(what string, ev *history.Evidence) error {
	var why []string
	for _, st := range ev.States {
		switch st.Source {
		case history.SourceEvents, history.SourceLeases, history.SourceLocks:
			if st.Read {
				return nil
			}
			why = append(why, string(st.Source)+" ("+termsafe.Line(st.Reason)+")")
		}
	}
	if len(why) == 0 {
		return nil
	}
	return &exitError{
		code: ExitSourceUnavailable,
		msg: "steward " + what + ": no source could be read: " + strings.Join(why, "; ") +
			"; nothing can be concluded (exit 5). Check the paths with `steward config check`",
	}
}

func emit(out io.Writer, asJSON bool, v any, text func()) error {
	if !asJSON {
		text()
		return nil
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// selfName is the user as the audit log names an actor: the Gitea login, else os_user@host.
func (g *globals) selfName() string {
	return gather.ActorName(govern.LocalActor(govern.RoleViewer, g.login))
}

func runSinceLeft(
	out io.Writer,
	g *globals,
	f *historyFlags,
	ev *history.Evidence,
	src gather.Sources,
	now time.Time,
) error {
	marks := gather.Marks{Dir: filepath.Join(f.stateDir, "seen"), Forbidden: []string{g.locksDir, filepath.Dir(g.dbPath)}}
	key := gather.Key(app.OSUser(), src)
	mark, ok, err := marks.Load(key)
	if err != nil {
		return err
	}
	if !ok {
		mark = now.Add(-24 * time.Hour)
		fmt.Fprintf(os.Stderr, "no last-seen mark for this workspace yet: showing the last 24 hours\n")
	}
	r := ev.Since(mark, g.selfName())
	if err := emit(out, g.jsonOut, r, func() { printSince(out, r) }); err != nil {
		return err
	}
	if err := nothingRead("history", ev); err != nil || f.keepMark {
		return err // nothing read moves no mark: the window stays for the next look
	}
	return marks.Save(key, app.OSUser(), g.locksDir+" "+g.dbPath, now)
}

func safe(s string) string { return termsafe.Line(s) }

func printTimeline(out io.Writer, tl history.Timeline) {
	what := "Timeline"
	switch {
	case !tl.Filter.Item.Zero():
		what += " of " + safe(tl.Filter.Item.String())
	case tl.Filter.Session != "":
		what += " of session " + safe(tl.Filter.Session)
	}
	if !tl.Filter.Since.IsZero() {
		what += " since " + history.Stamp(tl.Filter.Since)
	}
	if !tl.Filter.Until.IsZero() {
		what += " until " + history.Stamp(tl.Filter.Until)
	}
	fmt.Fprintf(out, "%s · read %s · %d entries\n", what, history.Stamp(tl.Read), len(tl.Entries))
	for _, e := range tl.Entries {
		who := e.Session
		if e.Actor != "" && e.Actor != e.Session {
			who = strings.Trim(who+" ("+e.Actor+")", " ")
		}
		it := ""
		if tl.Filter.Item.Zero() && !e.Item.Zero() {
			it = e.Item.String() + " "
		}
		fmt.Fprintf(
			out,
			"%s  %-6s %-9s %s%s  %s  [%s]\n",
			history.Stamp(e.At),
			e.Source,
			e.Kind,
			safe(it),
			safe(who),
			safe(e.Text),
			safe(e.Ref),
		)
	}
	printGaps(out, tl.Gaps)
	printSources(out, tl.Sources)
}

func printGaps(out io.Writer, gs []history.Gap) {
	if len(gs) == 0 {
		fmt.Fprintln(out, "Gaps: none")
		return
	}
	fmt.Fprintln(out, "Gaps (evidence missing — not \"nothing happened\"):")
	for _, g := range gs {
		fmt.Fprintf(out, "  %-12s %s\n", g.Kind, safe(g.String()))
	}
}

func printSources(out io.Writer, ss []history.SourceState) {
	var parts []string
	for _, s := range ss {
		p := string(s.Source)
		switch {
		case s.Read && s.From.IsZero():
			p += fmt.Sprintf(" read (%d)", s.Entries)
		case s.Read:
			p += fmt.Sprintf(" read (%d, from %s)", s.Entries, history.Stamp(s.From))
		default:
			p += " not read: " + s.Reason
		}
		parts = append(parts, safe(p))
	}
	fmt.Fprintln(out, "Sources: "+strings.Join(parts, " · "))
}

func printSince(out io.Writer, r history.SinceReport) {
	fmt.Fprintf(out, "Since you left (%s) · read %s\n", history.Stamp(r.Since), history.Stamp(r.Read))
	if len(r.Lines) == 0 {
		fmt.Fprintln(out, "  nothing recorded changed (see the gaps)")
	}
	var cat history.Category
	for _, l := range r.Lines {
		if l.Category != cat {
			cat = l.Category
			fmt.Fprintf(out, "%s:\n", cat)
		}
		when := ""
		if !l.At.IsZero() {
			when = history.Stamp(l.At) + "  "
		}
		fmt.Fprintf(out, "  %s%s\n", when, safe(l.Text))
	}
	printGaps(out, r.Gaps)
}

// statusAt prints the fleet reconstructed at an instant.
func runStatusAt(
	ctx context.Context,
	out io.Writer,
	g *globals,
	at string,
	window time.Duration,
	clock func() time.Time,
) error {
	now := clock().UTC()
	t, err := parseInstant("at", at, now)
	if err != nil {
		return err
	}
	if t.After(now) {
		return &exitError{
			code: ExitError,
			msg:  fmt.Sprintf("--at %s is in the future (now %s): the past only", history.Stamp(t), history.Stamp(now)),
		}
	}
	ev := gather.Read(ctx, g.historySources(), gather.Options{Now: clock})
	fl := ev.At(t, window)
	if err := emit(out, g.jsonOut, fl, func() { printFleet(out, fl) }); err != nil {
		return err
	}
	return nothingRead("status --at", ev)
}

func printFleet(out io.Writer, fl history.Fleet) {
	fmt.Fprintf(
		out,
		"The fleet as of %s — reconstructed from the evidence read at %s\n",
		history.Stamp(fl.At),
		history.Stamp(fl.Read),
	)
	fmt.Fprintf(out, "Claims live then (%d):\n", len(fl.Claims))
	for _, c := range fl.Claims {
		state := string(c.State)
		switch c.State {
		case history.ClaimHeld:
			state = "held, expires " + history.Stamp(c.Expires)
		case history.ClaimPastExpiry:
			state = "PAST EXPIRY since " + history.Stamp(c.Expires)
		case history.ClaimExpiryUnknown:
			state = "held, expiry then unknown"
		case history.ClaimLockOnly:
			state = "lock only (no lease known)"
		}
		line := fmt.Sprintf("  %-22s %-14s %s · since %s", c.Item.String(), c.Session, state, history.Stamp(c.Since))
		if c.Lease != "" {
			line += " · " + c.Lease
		}
		if c.LockFile != "" {
			line += fmt.Sprintf(" · lock gen %d", c.LockGeneration)
		}
		if !c.Ended.IsZero() {
			line += " · ended " + history.Stamp(c.Ended)
		}
		var src []string
		for _, s := range c.Sources {
			src = append(src, string(s))
		}
		fmt.Fprintln(out, safe(line+" ["+strings.Join(src, "+")+"]"))
		for _, n := range c.Notes {
			fmt.Fprintln(out, "      "+safe(n))
		}
	}
	if len(fl.Collisions) == 0 {
		fmt.Fprintln(out, "Collisions: none")
	}
	for _, c := range fl.Collisions {
		fmt.Fprintf(out, "Collision: %s held by %s\n", safe(c.Item.String()), safe(strings.Join(c.Sessions, " and ")))
	}
	fmt.Fprintf(out, "Refused claims in the %s before:", fl.Window)
	if len(fl.Contention) == 0 {
		fmt.Fprint(out, " none")
	}
	fmt.Fprintln(out)
	for _, c := range fl.Contention {
		line := fmt.Sprintf("  %-22s %d refused (%s)", c.Item.String(), c.Refusals, strings.Join(c.Sessions, ", "))
		if len(c.Holders) > 0 {
			line += ", held by " + strings.Join(c.Holders, ", ")
		}
		fmt.Fprintln(out, safe(line))
	}
	fmt.Fprintln(out, "Unknown at that moment:")
	for _, u := range fl.Unknown {
		fmt.Fprintln(out, "  - "+safe(u))
	}
}

func printHeat(out io.Writer, h history.Heat) {
	fmt.Fprintf(out, "Contention %s – %s: %d sessions × %d items (claims/refused/collisions)\n",
		history.Stamp(h.From), history.Stamp(h.To), len(h.Sessions), len(h.Items))
	for s, sess := range h.Sessions {
		var cells []string
		for i, c := range h.Cells[s] {
			if c.Total() == 0 {
				continue
			}
			cells = append(cells, fmt.Sprintf("%s %d/%d/%d", h.Items[i], c.Claims, c.Refusals, c.Collisions))
		}
		fmt.Fprintf(out, "  %-16s %s\n", safe(sess), safe(strings.Join(cells, " · ")))
	}
	printGaps(out, h.Gaps)
}
