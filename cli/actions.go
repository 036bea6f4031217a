package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"steward/config"
	"steward/govern"
	"steward/govern/actionid"
	"steward/reponame"
	"steward/termsafe"
)

// flagSpec maps one command-line flag onto a request: a target field or a parameter.
type flagSpec struct {
	name, usage string
	// target names a Target field (lease, lock, session, attempt) or the item parts
	// (remote, org, repo, kind, number); empty means a parameter of the same name.
	target   string
	def      string
	required bool
	// param, when set, is the parameter's name (default: the flag's name): one of the
	// names govern.ParamNames lists for the command's action (TestEveryFlagIsAParameter).
	param string
	// check, when set, validates a non-empty value: a value it refuses is an error naming
	// the flag, the value and what is accepted — never "no pid" or a parser's internals.
	check func(string) error
}

// checkPID accepts a process id: a whole number from 1 to 2^31-1 (the kernel's pid_t).
func checkPID(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt32 {
		return fmt.Errorf(
			"--pid %q is not a process id: use a whole number from 1 to %d, or leave it out for the parent process",
			clipArg(v),
			math.MaxInt32,
		)
	}
	return nil
}

// checkTTL accepts a positive Go duration.
func checkTTL(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf(
			"--ttl %q is not a positive duration: use a number with a unit, such as 90s, 10m or 1h30m",
			clipArg(v),
		)
	}
	return nil
}

// parseItemRef reads ORG/REPO#N (an issue) or ORG/REPO!N (a pull request).
func parseItemRef(v string) (govern.Item, error) {
	kind, sep := "issue", "#"
	if strings.Contains(v, "!") {
		kind, sep = "pr", "!"
	}
	repo, num, ok := strings.Cut(v, sep)
	org, name, ok2 := strings.Cut(repo, "/")
	n, err := strconv.ParseInt(num, 10, 64)
	if !ok || !ok2 || org == "" || name == "" || strings.Contains(name, "/") || err != nil || n <= 0 {
		return govern.Item{}, fmt.Errorf(
			"--item %q is not an item: write ORG/REPO#N for an issue or ORG/REPO!N for a pull request, e.g. acme/widgets#42",
			clipArg(v),
		)
	}
	return govern.Item{Org: org, Repo: name, Kind: kind, Number: n}, nil
}

// checkItemRef accepts ORG/REPO#N or ORG/REPO!N.
func checkItemRef(v string) error {
	_, err := parseItemRef(v)
	return err
}

// clipArg keeps an echoed argument short.
func clipArg(v string) string {
	if r := []rune(v); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return v
}

// actionCmd is one governed action on the command line.
type actionCmd struct {
	path   []string // e.g. {"lease", "reclaim-expired"}
	action string
	short  string
	flags  []flagSpec
	worker bool
}

var itemFlags = []flagSpec{
	{
		name:   "remote",
		target: "remote",
		usage:  "the Gitea remote name (default: the workspace's gitea.remote when set)",
		def:    "origin",
	},
	{name: "org", target: "org", usage: "repository owner", required: true},
	{name: "repo", target: "repo", usage: "repository name", required: true},
	{name: "kind", target: "kind", usage: "issue or pr", def: "issue"},
	{name: "number", target: "number", usage: "issue or PR number", required: true},
}

var workerFlags = []flagSpec{
	{name: "session", target: "session", usage: "the worker's control-plane session id", required: true},
}

// fenceFlags fence a worker's heartbeat, release or ask on the values it holds from its
// claim or last heartbeat: a value that moved is refused fence_moved.
var fenceFlags = []flagSpec{
	{
		name:  "expect-expires-at",
		param: "expect_expires_at",
		usage: "refuse unless the lease's expires_at is still this (from the claim or the last heartbeat)",
	},
	{
		name:  "expect-lock-generation",
		param: "expect_lock_generation",
		usage: "refuse unless the lock's lock_generation is still this",
	},
	{
		name:  "expect-task-session",
		param: "expect_task_session_id",
		usage: "refuse unless the lock's task_session_id is still this",
	},
	{
		name:  "expect-lease-generation",
		param: "expect_lease_generation",
		usage: "refuse unless the lease's lease_generation_id is still this (DBs that record one)",
	},
}

// attentionFlags name an attention entry as `steward watch --json` prints it.
func attentionFlags() []flagSpec {
	return []flagSpec{
		{
			name:     "entry",
			target:   "entry",
			usage:    "the entry's key (the entry.key field of steward watch --json)",
			required: true,
		},
		{
			name:     "evidence",
			usage:    "the entry's evidence fingerprint (entry.evidence): the acknowledgement holds for what was seen",
			required: true,
		},
		{
			name:  "level",
			usage: "the level acknowledged (the event's level: 0 within the SLA, 1 past it, 2+ re-escalations)",
			def:   "0",
		},
	}
}

func ownLeaseFlags(lease flagSpec, extra ...flagSpec) []flagSpec {
	return append(append(append([]flagSpec{lease}, extra...), workerFlags...), fenceFlags...)
}

func actionCommands() []actionCmd {
	lease := flagSpec{name: "lease", target: "lease", usage: "lease id", required: true}
	return []actionCmd{
		{
			path:   []string{"lease", "reclaim-expired"},
			action: actionid.ReclaimExpired,
			short:  "End an expired lease so its item is free again",
			flags:  []flagSpec{lease},
		},
		{
			path:   []string{"lease", "abandon"},
			action: actionid.AbandonStale,
			short:  "Abandon a stale lease (dead owner or missing worktree), with its evidence recorded",
			flags:  []flagSpec{lease},
		},
		{
			path:   []string{"lease", "expire-sweep"},
			action: actionid.ExpireSweep,
			short:  "Mark every active lease past its expiry as expired",
		},
		{
			path:   []string{"lock", "retire"},
			action: actionid.RetireLock,
			short:  "Archive a dead or expired lock file with a recovery block",
			flags:  []flagSpec{{name: "file", target: "lock", usage: "lock file name in the locks directory", required: true}},
		},
		{
			path:   []string{"recover"},
			action: actionid.Recover,
			short: "Recover an item a dead or stalled claim left: end its lease (reclaim or abandon) and retire its lock, " +
				"in one plan",
			flags: []flagSpec{
				{
					name:     "item",
					target:   "itemref",
					usage:    "the item, as ORG/REPO#N (an issue) or ORG/REPO!N (a pull request)",
					required: true,
					check:    checkItemRef,
				},
				{
					name:   "remote",
					target: "remote",
					usage:  "the Gitea remote name (default: the workspace's gitea.remote when set)",
					def:    "origin",
				},
			},
		},
		{
			path:   []string{"undo"},
			action: actionid.Undo,
			short:  "Apply the inverse an earlier attempt recorded",
			flags:  []flagSpec{{name: "attempt", target: "attempt", usage: "audit attempt id", required: true}},
		},
		{
			path:   []string{"claim"},
			action: actionid.Claim,
			worker: true,
			short:  "Claim an item for a worker session (worker action)",
			flags: append(append([]flagSpec{
				{name: "role", usage: "task role: author, reviewer, merger or conflict-fix", def: "author"},
				{name: "profile", usage: "worker profile", def: ""},
				{name: "pid", usage: "the worker's process id (default: the parent process)", def: "", check: checkPID},
				{name: "ttl", usage: "lease TTL (Go duration); default from the lease policy", def: "", check: checkTTL},
				{name: "branch", usage: "branch name (as git check-ref-format accepts it); default minted from the issue", def: ""},
				{
					name:  "worktree",
					usage: "worktree path, absolute and inside <repo-root>/branches; default <repo-root>/branches/<branch>",
					def:   "",
				},
				{name: "username", usage: "claimant's Gitea username", def: ""},
			}, workerFlags...), itemFlags...),
		},
		{
			path:   []string{"heartbeat"},
			action: actionid.Heartbeat,
			worker: true,
			short:  "Heartbeat a worker's lease and lock (worker action)",
			flags:  ownLeaseFlags(lease),
		},
		{
			path:   []string{"release"},
			action: actionid.Release,
			worker: true,
			short:  "Release a worker's lease and archive its lock (worker action)",
			flags:  ownLeaseFlags(lease),
		},
		{
			path:   []string{"attention", "ack"},
			action: actionid.AttentionAck,
			short:  "Acknowledge an attention entry: quiet until its evidence changes or it escalates past this level",
			flags:  attentionFlags(),
		},
		{
			path:   []string{"attention", "snooze"},
			action: actionid.AttentionSnooze,
			short:  "Snooze an attention entry: quiet until the snooze ends",
			flags: append(attentionFlags(),
				flagSpec{name: "for", usage: "how long (Go duration, 1m to 168h), e.g. 30m or 4h", required: true}),
		},
	}
}

func addActionCommands(root *cobra.Command, g *globals) {
	groups := map[string]*cobra.Command{}
	for _, ac := range append(actionCommands(), clarificationCommands()...) {
		parent := root
		for _, p := range ac.path[:len(ac.path)-1] {
			grp, ok := groups[p]
			if !ok {
				grp = &cobra.Command{Use: p, Short: p + " actions"}
				groups[p] = grp
				root.AddCommand(grp)
			}
			parent = grp
		}
		parent.AddCommand(newActionCommand(ac, g))
	}
	root.AddCommand(&cobra.Command{
		Use:   "actions",
		Short: "List the actions the governed core knows",
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, done, err := g.core()
			if err != nil {
				return err
			}
			defer done()
			return printOut(cmd.OutOrStdout(), g.jsonOut, c.Actions(), func(w io.Writer) {
				for _, s := range c.Actions() {
					fmt.Fprintf(w, "%-24s %-11s %-12s %s\n", s.ID, s.MinRole, s.Tier, s.Title)
				}
			})
		},
	})
}

func newActionCommand(ac actionCmd, g *globals) *cobra.Command {
	vals := make([]string, len(ac.flags))
	var dryRun bool
	var confirm string
	cmd := &cobra.Command{
		Use:   ac.path[len(ac.path)-1],
		Short: ac.short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			req, err := buildRequest(ac, vals)
			if err != nil {
				return &exitError{code: ExitError, msg: err.Error()}
			}
			if it := req.Target.Item; it != nil && !cmd.Flags().Changed("remote") && g.resolved != nil {
				// The workspace's remote (gitea.remote) is what its workers name the item by.
				if r := strings.TrimSpace(g.resolved.Get(config.KeyGiteaRemote).Value); r != "" {
					it.Remote = r
				}
			}
			c, done, err := g.core()
			if err != nil {
				return err
			}
			defer done()
			if ac.worker {
				// A worker acts as its session: the audit records name it, as over MCP.
				c = c.ForSession(req.Target.Session)
			}
			return runAction(cmd.Context(), cmd.OutOrStdout(), c, req, dryRun, confirm, g.jsonOut)
		},
	}
	for i, f := range ac.flags {
		cmd.Flags().StringVar(&vals[i], f.name, f.def, f.usage+f.limitNote())
		if f.required {
			_ = cmd.MarkFlagRequired(f.name)
		}
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "preview only: read, run every guard, write nothing")
	cmd.Flags().StringVar(&confirm, "confirm", "", "the confirmation phrase a destructive action asks for")
	return cmd
}

// limitNote says the flag's size limit, from the governed core's one table of argument
// limits (govern.ArgLimits): the core refuses a longer value too_large in its preview.
func (f flagSpec) limitNote() string {
	name := f.paramName()
	switch f.target {
	case "":
	case "lease":
		name = "target.lease_id"
	case "lock":
		name = "target.lock_file"
	case "session", "attempt", "entry":
		name = "target." + f.target
	case "remote", "org", "repo", "kind":
		name = "target.item." + f.target
	default:
		return ""
	}
	if l, ok := govern.LimitOf(name); ok {
		return fmt.Sprintf(" (at most %d bytes)", l.Max)
	}
	return ""
}

func (f flagSpec) paramName() string {
	if f.param != "" {
		return f.param
	}
	return f.name
}

func buildRequest(ac actionCmd, vals []string) (govern.Request, error) {
	req := govern.Request{Action: ac.action}
	params := map[string]string{}
	var item govern.Item
	hasItem := false
	for i, f := range ac.flags {
		v := strings.TrimSpace(vals[i])
		if f.check != nil && v != "" {
			if err := f.check(v); err != nil {
				return req, err
			}
		}
		switch f.target {
		case "lease":
			req.Target.LeaseID = v
		case "lock":
			req.Target.LockFile = v
		case "session":
			req.Target.Session = v
		case "attempt":
			req.Target.Attempt = v
		case "entry":
			req.Target.Entry = v
		case "remote":
			item.Remote, hasItem = v, true
		case "itemref":
			it, _ := parseItemRef(v)
			item.Org, item.Repo, item.Kind, item.Number, hasItem = it.Org, it.Repo, it.Kind, it.Number, true
		case "org":
			item.Org, hasItem = v, true
		case "repo":
			item.Repo, hasItem = v, true
		case "kind":
			item.Kind, hasItem = v, true
		case "number":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return req, fmt.Errorf("--number %q is not an issue or PR number: use a positive whole number", clipArg(v))
			}
			item.Number, hasItem = n, true
		case "":
			if v != "" {
				params[f.paramName()] = v
			}
		}
	}
	// The flags decode once, here, into the struct the action takes.
	p, err := govern.DecodeParams(ac.action, params)
	if err != nil {
		return req, err
	}
	if cp, ok := p.(govern.ClaimParams); ok && cp.PID == "" {
		// A worker's claim names its process: by default the one that ran steward.
		cp.PID = strconv.Itoa(os.Getppid())
		p = cp
	}
	req.Params = p
	if hasItem {
		// One item per repository: the spellings Gitea serves as one are written as one, and a
		// spelling it would not accept is refused here, before anything is asked (reponame).
		org, repo, err := reponame.Canonical(item.Org, item.Repo)
		if err != nil {
			return req, fmt.Errorf("%s: %v; nothing was done", itemFlagsOf(ac), err)
		}
		item.Org, item.Repo = org, repo
		req.Target.Item = &item
	}
	return req, nil
}

// itemFlagsOf names the flags an action command takes its item's owner and repository from.
func itemFlagsOf(ac actionCmd) string {
	for _, f := range ac.flags {
		if f.target == "itemref" {
			return "--item"
		}
	}
	return "--org/--repo"
}

// runAction previews req, prints the preview, and applies it unless dryRun.
func runAction(
	ctx context.Context,
	w io.Writer,
	c *govern.Core,
	req govern.Request,
	dryRun bool,
	confirm string,
	jsonOut bool,
) error {
	if ctx == nil {
		ctx = context.Background()
	}
	pv, err := c.Preview(ctx, req)
	if err != nil {
		return err
	}
	if dryRun {
		_ = printOut(w, jsonOut, pv, func(w io.Writer) { writePreview(w, pv) })
		if !pv.Allowed {
			return &exitError{code: ExitRefused}
		}
		return nil
	}
	// A refused preview is still applied: the apply refuses the same way, and the attempt is
	// audited (a refused claim also leaves its claim.refused event for contention).
	out := c.Apply(ctx, pv, confirm)
	_ = printOut(w, jsonOut, out, func(w io.Writer) { writeOutcome(w, out) })
	switch out.Result {
	case govern.ResultSucceeded:
		return nil
	case govern.ResultRefused:
		return &exitError{code: ExitRefused}
	case govern.ResultUnknown:
		return &exitError{code: exitUnknown}
	}
	return &exitError{code: ExitError}
}

func writePreview(w io.Writer, pv govern.Preview) {
	fmt.Fprintf(w, "preview  %s  (role %s, tier %s)\n", pv.Spec.ID, pv.Spec.MinRole, pv.Spec.Tier)
	if pv.Allowed {
		fmt.Fprintln(w, "allowed")
	} else {
		fmt.Fprintf(w, "refused  %s: %s\n", pv.Refusal.Code, termsafe.Text(pv.Refusal.Message))
	}
	section(w, "effects", pv.Effects)
	section(w, "fences", pv.Fences)
	section(w, "evidence", pv.Evidence)
	if pv.ConfirmPhrase != "" {
		fmt.Fprintf(w, "confirm with: --confirm %q\n", pv.ConfirmPhrase)
	}
	fmt.Fprintln(w, "nothing was changed (dry run)")
}

func writeOutcome(w io.Writer, out govern.Outcome) {
	att := "attempt " + out.Attempt
	if out.Code == govern.CodeReadOnly {
		att = "not recorded: read-only" // a read-only steward appends nothing to the audit log
	}
	fmt.Fprintf(w, "%s  %s  (%s, %s)\n", out.Result, out.Action, out.Disposition, att)
	if out.Code != "" {
		fmt.Fprintf(w, "%s: %s\n", out.Code, termsafe.Text(out.Message))
	} else if out.Message != "" && out.Message != "done" {
		fmt.Fprintln(w, termsafe.Text(out.Message))
	}
	section(w, "effects", out.Effects)
	for k, v := range out.Detail {
		fmt.Fprintf(w, "%s: %s\n", k, termsafe.Line(v))
	}
}

func section(w io.Writer, name string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", name)
	for _, l := range lines {
		// A line of several (a plan's step and its effects) keeps its own lines indented
		// under it.
		fmt.Fprintf(w, "  - %s\n", strings.ReplaceAll(termsafe.Text(l), "\n", "\n    "))
	}
}

func printOut(w io.Writer, asJSON bool, v any, text func(io.Writer)) error {
	if !asJSON {
		text(w)
		return nil
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
