package cli

import (
	"os"
	"time"

	"steward/app"
	"steward/attention"
	"steward/config"
	"steward/tui"
)

// demoAttention is how the demo's workbench makes a person hear about attention entries
// (docs/attention.md, "On the demo"). The SLAs are in the demo's virtual time: a question
// may wait one simulated hour (the Clarifications view's SLA), the other kinds
// attention.DefaultSLAs — each divided by the demo's speed, so at 20× a question is overdue
// after 3 real minutes. The bell and the desktop notification are on, as in `steward ui` by
// default (openWorkbench applies notify.bell and notify.desktop); no notify command runs: a
// simulation pages nobody.
func demoAttention(speed float64) app.Attention {
	scale := func(x time.Duration) time.Duration { return time.Duration(float64(x) / speed) }
	d := attention.DefaultSLAs
	return app.Attention{
		SLAs: attention.SLAs{
			Clarification: scale(time.Hour),
			Orphan:        scale(d.Orphan),
			Collision:     scale(d.Collision),
			Source:        scale(d.Source),
		},
		Reescalations: 2, Bell: true, Desktop: true,
	}
}

// demoSnoozes are the demo's snooze lengths: real time, short enough to watch one end.
var demoSnoozes = []time.Duration{time.Minute, 3 * time.Minute, 10 * time.Minute, time.Hour}

// demoNotifySettings applies the configuration's notify.bell, notify.desktop and
// notify.reescalations to the demo's attention options (never notify.command), and wraps the
// desktop notification for the terminal multiplexer the demo runs in (the demo's session
// looks its environment up in the lease-policy overrides only).
func (g *globals) demoNotifySettings(o *tui.AttentionOptions) error {
	r := g.resolved
	if r == nil {
		var err error
		if r, err = config.Load(config.Inputs{Path: g.configPath, Workspace: g.workspace, Login: g.login}); err != nil {
			return err
		}
	}
	s, err := app.FromConfig(r, os.LookupEnv)
	if err != nil {
		return err
	}
	o.Bell, o.Desktop, o.Reescalations = s.Attention.Bell, s.Attention.Desktop, s.Attention.Reescalations
	o.Mux = attention.DetectMux(os.Getenv)
	return nil
}
