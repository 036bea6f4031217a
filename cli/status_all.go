package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"steward/app"
	"steward/config"
	"steward/govern"
	"steward/termsafe"
)

// allSettings is every workspace of the config file (config.LoadAll, the default first)
// mapped onto its settings; a configuration error of any workspace is the error, naming it.
func allSettings(g *globals) ([]app.Settings, error) {
	rs, err := config.LoadAll(g.inputs)
	if err != nil {
		return nil, err
	}
	var msgs []string
	for _, r := range rs {
		for _, p := range r.Problems {
			if p.Severity == config.SevError {
				msgs = append(msgs, "workspace "+r.Name()+": "+p.Code+": "+termsafe.Line(p.Message))
			}
		}
	}
	if len(msgs) > 0 {
		return nil, &exitError{
			code: ExitError,
			msg:  "steward's configuration has errors (run `steward config check`):\n  " + strings.Join(msgs, "\n  "),
		}
	}
	all, err := app.AllFromConfig(rs, os.LookupEnv)
	if err != nil {
		return nil, &exitError{code: ExitError, msg: err.Error()}
	}
	return all, nil
}

// runStatusAll is `steward status --all`: every workspace of the config file (config.LoadAll,
// the default first), each opened through the one assembly (app.OpenAll) and read once. The
// exit code is the worst of them: 5 when a configured source of any is unavailable, else 6
// when --fail-on finds what it names in any, else 0; each reason on stderr names its
// workspace.
func runStatusAll(ctx context.Context, out io.Writer, g *globals, f *statusFlags, clock func() time.Time) error {
	all, err := allSettings(g)
	if err != nil {
		return err
	}
	secrets := g.secrets()
	for i := range all {
		// The session's core has no audit log: it previews and writes nothing.
		all[i].Audit, all[i].Role, all[i].Now = app.AuditNone, govern.RoleViewer, clock
		all[i].Gitea.Off, all[i].Warn = f.noGitea, os.Stderr
		all[i].Login, all[i].ReadOnly, all[i].ReadOnlyReason, all[i].Secrets = g.login, g.readOnly, g.readOnlyWhy, secrets
	}
	sessions, err := app.OpenAll(ctx, all)
	if err != nil {
		return err
	}
	defer app.CloseAll(sessions)
	bw := bufio.NewWriterSize(out, 64<<10)
	if g.jsonOut {
		bw.WriteString(`{"workspaces":[`)
	}
	code, why := ExitOK, []string(nil)
	for i, sess := range sessions {
		st := all[i]
		notes, unknown := unsettled(st.AuditPath)
		s := sess.Snapshot(ctx)
		shown := sess.Secrets.Snapshot(withNotes(s, notes))
		if g.jsonOut {
			if i > 0 {
				bw.WriteByte(',')
			}
			head, _ := json.Marshal(struct {
				Name string `json:"name"`
				Host string `json:"host,omitempty"`
			}{sess.Name(), st.Host})
			bw.Write(head[:len(head)-1])
			bw.WriteString(`,"snapshot":`)
			if err := shown.EncodeJSON(func(b []byte) error { _, err := bw.Write(b); return err }); err != nil {
				return err
			}
			bw.WriteByte('}')
		} else {
			if i > 0 {
				bw.WriteString("\n")
			}
			host := ""
			if st.Host != "" {
				host = " (lock directory on " + termsafe.Line(st.Host) + ")"
			}
			fmt.Fprintf(bw, "== workspace %s%s ==\n", termsafe.Line(sess.Name()), host)
			printText(bw, shown)
		}
		c, msg := statusVerdict(s, unknown, f.failOn)
		if c != ExitOK {
			why = append(why, "workspace "+sess.Name()+": "+msg)
		}
		if worse(c, code) {
			code = c
		}
	}
	if g.jsonOut {
		bw.WriteString("]}\n")
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return statusExit(code, strings.Join(why, "\n"))
}

// worse reports whether exit code a is worse than b: unavailable (5) over attention (6)
// over ok.
func worse(a, b int) bool {
	rank := func(c int) int {
		switch c {
		case ExitSourceUnavailable:
			return 2
		case exitAttention:
			return 1
		}
		return 0
	}
	return rank(a) > rank(b)
}
