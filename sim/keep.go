package sim

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"steward/config"
	"steward/leases/leaserec"
)

// configName is the file, in the demo's folder, that describes its workspace to steward.
const configName = "steward.yaml"

// writeConfig writes ConfigName into the demo's folder: a steward configuration whose one
// workspace is the demo's — its lock directory, DB, repository root and audit log, the
// lease policy compressed as the demo's core runs it (lease_policy, not variables), and the
// model's durations compressed alike (clarification_sla, stale_pr, contention_window) — so
// that `steward --config <file> status` reads the workspace as the demo's workbench does,
// during the demo or after it (--keep). A real Gitea's URL and repository are named (its
// token is not: `status` takes it from $STEWARD_GITEA_TOKEN); the in-process one stops with
// the demo and is left out.
func (d *Demo) writeConfig() error {
	mc := d.ModelConfig()
	ws := config.Workspace{LocksDir: d.Workspace.LocksDir, DBPath: d.Workspace.DBPath, RepoRoot: d.Workspace.RepoRoot,
		AuditLog: d.AuditPath, LeasePolicy: policyValues(d.opts.Speed)}
	if d.Fake == nil {
		ws.Gitea = config.Gitea{URL: d.GiteaURL, Owner: d.Owner, Repo: d.Repo, Remote: d.Remote}
	}
	f := config.File{DefaultWorkspace: "demo", Workspaces: map[string]config.Workspace{"demo": ws},
		ClarificationSLA: config.Duration(d.ClarificationSLA()),
		Thresholds: config.Thresholds{
			StalePR:          config.Duration(mc.StalePRQuiet),
			ContentionWindow: config.Duration(mc.RefusedWindow),
		}}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("demo: config: %w", err)
	}
	b := buf.Bytes()
	head := fmt.Sprintf("# steward's configuration of the demo workspace in %s (written by steward demo).\n"+
		"# The lease policy and the model's durations are compressed %gx, as the demo ran them.\n"+
		"# Read it with: %s\n", d.Root, d.opts.Speed, strings.Join(d.StatusCommand(), " "))
	return os.WriteFile(d.ConfigPath(), append([]byte(head), b...), 0o600)
}

// ConfigPath is the demo's configuration file (writeConfig).
func (d *Demo) ConfigPath() string { return filepath.Join(d.Root, configName) }

// StatusCommand is the one command that inspects the demo's workspace with `steward
// status`, as shell words (each quoted when it needs to be).
func (d *Demo) StatusCommand() []string {
	return []string{"steward", "--config", ShellQuote(d.ConfigPath()), "status"}
}

// ShellQuote quotes s for a POSIX shell when it holds anything but letters, digits and
// -_./:=@+, (single quotes; a single quote inside is written '\”).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=@+,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// policyValues is the seed's lease policy with every duration compressed by speed, by task
// class and field (none when speed <= 1).
func policyValues(speed float64) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	if speed <= 1 {
		return out
	}
	for _, c := range leaserec.KnownTaskClasses() {
		p := leaserec.DefaultPolicy(c)
		m := map[string]float64{
			leaserec.FieldInitialTTLMinutes:           p.InitialTTLMinutes / speed,
			leaserec.FieldHeartbeatCadenceMinutes:     p.HeartbeatCadenceMinutes / speed,
			leaserec.FieldStaleWarningMinutes:         p.StaleWarningMinutes / speed,
			leaserec.FieldMissedHeartbeatGraceMinutes: p.MissedHeartbeatGraceMinutes / speed,
			leaserec.FieldRecoveryGraceMinutes:        p.RecoveryGraceMinutes / speed,
			leaserec.FieldTerminalRaceDrainMinutes:    p.TerminalRaceDrainMinutes / speed,
		}
		if p.AbsoluteCapHours != nil {
			m[leaserec.FieldAbsoluteCapHours] = *p.AbsoluteCapHours / speed
		}
		out[string(c)] = m
	}
	return out
}
