package cli

import (
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"steward/app"
	"steward/attention"
	"steward/attention/store"
	"steward/govern"
	"steward/termsafe"
)

// attentionRow is one line of `steward attention list`: an entry with what `attention ack`
// and `attention snooze` take (its key and evidence), its age, level and marks.
type attentionRow struct {
	Key       string    `json:"key"`
	Evidence  string    `json:"evidence"`
	Kind      string    `json:"kind"`
	Sub       string    `json:"sub,omitempty"`
	Need      string    `json:"need"`
	Item      string    `json:"item,omitempty"`
	Title     string    `json:"title,omitempty"`
	Since     time.Time `json:"since,omitzero"`
	SinceFrom string    `json:"since_from,omitempty"`
	AgeS      int64     `json:"age_s"`
	SLAS      int64     `json:"sla_s"`
	Level     int       `json:"level"`
	Acked     bool      `json:"acknowledged"`
	Snoozed   bool      `json:"snoozed"`
}

// attentionList is `steward attention list --json`.
type attentionList struct {
	At      time.Time      `json:"at"`
	Entries []attentionRow `json:"entries"`
	// Unread names the sources not read completely: an entry of theirs may be missing.
	Unread []string `json:"unread"`
}

// addAttentionList adds `steward attention list` beside ack and snooze.
func addAttentionList(root *cobra.Command, g *globals) {
	var grp *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "attention" {
			grp = c
		}
	}
	if grp == nil {
		return
	}
	var noGitea bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the attention entries now, with the key and evidence `attention ack` and `attention snooze` take",
		Long: `list reads every source once (as steward status does) and prints the attention entries:
what needs a person or an operator now, each with its key and evidence fingerprint — what
` + "`steward attention ack --entry KEY --evidence EVIDENCE`" + ` takes —, its need, item, age and SLA, its level
(0 within the SLA, 1 past it, 2+ re-escalations) and whether an acknowledgement or a snooze
keeps it quiet. Ages run from the evidence, else from when steward watch first saw the entry
(its kept state), else from now. It writes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := g.settings()
			if err != nil {
				return err
			}
			st.Audit, st.Role, st.Gitea.Off, st.Warn = app.AuditNone, govern.RoleViewer, noGitea, os.Stderr
			sess, err := app.Open(cmd.Context(), st)
			if err != nil {
				return err
			}
			defer sess.Close()
			entries, unread, snap := sess.AttentionNow(cmd.Context())
			marks, err := readMarks(g.audit)
			if err != nil {
				return &exitError{
					code: ExitError,
					msg:  "steward attention list: the attention file beside " + g.audit + " cannot be read: " + err.Error(),
				}
			}
			tr := attention.NewTracker(attention.Config{Reescalations: st.Attention.Reescalations})
			if kept, err := store.Load(store.Path(g.audit, store.Surface(store.SurfaceWatch, st.Workspace))); err == nil {
				tr.Restore(kept) // first-seen times as steward watch knows them; read only
			}
			now := snap.GeneratedAt
			tr.Observe(attention.Frame{Now: now, Entries: entries, Unread: unread, Marks: marks})
			out := attentionList{At: now, Entries: []attentionRow{}, Unread: []string{}}
			for src := range unread {
				out.Unread = append(out.Unread, string(src))
			}
			for _, r := range tr.Inbox(now, true) {
				e := r.Entry
				out.Entries = append(
					out.Entries,
					attentionRow{Key: e.Key, Evidence: e.Evidence, Kind: string(e.Kind), Sub: e.Sub, Need: string(e.Need),
						Item: e.Item, Title: termsafe.Line(e.Title), Since: now.Add(-r.Age), SinceFrom: string(e.SinceFrom),
						AgeS: int64(r.Age / time.Second), SLAS: int64(e.SLA / time.Second),
						Level: r.Level, Acked: r.Acked, Snoozed: r.Snoozed},
				)
			}
			return printOut(cmd.OutOrStdout(), g.jsonOut, out, func(w io.Writer) { writeAttentionList(w, out) })
		},
	}
	cmd.Flags().BoolVar(&noGitea, "no-gitea", false, "do not read Gitea")
	grp.AddCommand(cmd)
}

func writeAttentionList(w io.Writer, l attentionList) {
	fmt.Fprintf(w, "attention entries at %s: %d\n", l.At.UTC().Format(time.RFC3339), len(l.Entries))
	if len(l.Unread) > 0 {
		fmt.Fprintf(w, "not read completely: %v — an entry of theirs may be missing\n", l.Unread)
	}
	if len(l.Entries) == 0 {
		fmt.Fprintln(w, "nothing needs a person or an operator")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tEVIDENCE\tNEED\tAGE\tSLA\tLEVEL\tSTATE\tWHAT")
	for _, r := range l.Entries {
		state := "waiting"
		switch {
		case r.Acked:
			state = "acknowledged"
		case r.Snoozed:
			state = "snoozed"
		}
		age := (time.Duration(r.AgeS) * time.Second).String()
		if r.SinceFrom == string(attention.SinceFirstSeen) {
			age = "≥" + age
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", termsafe.Line(r.Key), r.Evidence, r.Need, age,
			(time.Duration(r.SLAS) * time.Second).String(), r.Level, state, termsafe.Truncate(r.Title, 80))
	}
	_ = tw.Flush()
}
