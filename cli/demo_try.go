package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"steward/app"
	"steward/config"
	"steward/govern"
	"steward/model"
	"steward/sim"
)

// demoTry is what a kept demo hands the README's examples: its configuration file, and one
// item a claim of the run still holds — its lease and lock file — read back from the kept
// workspace after the run (every simulated worker is gone then: the claim's owner is dead).
type demoTry struct {
	Config string `json:"config"`
	Item   string `json:"item,omitempty"`
	Lease  string `json:"lease,omitempty"`
	Lock   string `json:"lock,omitempty"`
}

// keptTry reads the kept workspace once, as `steward --config <its file> status` does (the
// one assembly, a preview-only core, no Gitea: the in-process one stopped with the demo),
// and picks the claim with a lease and a lock file on the lowest item number.
func keptTry(ctx context.Context, cfgPath string) demoTry {
	t := demoTry{Config: cfgPath}
	r, err := config.Load(config.Inputs{Path: cfgPath})
	if err != nil || r.HasErrors() {
		return t
	}
	st, err := app.FromConfig(r, os.LookupEnv)
	if err != nil {
		return t
	}
	st.Audit, st.Role, st.Gitea.Off = app.AuditNone, govern.RoleViewer, true
	sess, err := app.Open(ctx, st)
	if err != nil {
		return t
	}
	defer sess.Close()
	var held []*model.Claim
	for _, c := range sess.Snapshot(ctx).Claims {
		if c.Item != nil && c.LeaseID != "" && c.LockFile != "" && c.LeaseStatus == "active" {
			held = append(held, c)
		}
	}
	if len(held) == 0 {
		return t
	}
	c := slices.MinFunc(held, func(a, b *model.Claim) int { return int(a.Item.Number - b.Item.Number) })
	t.Item, t.Lease, t.Lock = c.Item.String(), c.LeaseID, c.LockFile
	return t
}

// exports is the shell line that sets STEWARD_CONFIG (and ITEM, LEASE and LOCK when the
// kept workspace holds a claim) for the README's examples.
func (t demoTry) exports() string {
	s := "export STEWARD_CONFIG=" + sim.ShellQuote(t.Config)
	if t.Item != "" {
		s += " ITEM=" + sim.ShellQuote(t.Item) + " LEASE=" + sim.ShellQuote(t.Lease) + " LOCK=" + sim.ShellQuote(t.Lock)
	}
	return s
}

// whereSteward says where `steward` runs from in a new shell: on the PATH, or — when it is
// not there (the demo ran with `go run .`) — where `go install .` puts it and whether it is
// there already. The printed commands say `steward`; this line makes them run as written.
func whereSteward(w io.Writer) {
	if p, err := exec.LookPath("steward"); err == nil {
		fmt.Fprintf(w, "(steward is on your PATH: %s)\n", p)
		return
	}
	bin := os.Getenv("GOBIN")
	if bin == "" {
		gp := os.Getenv("GOPATH")
		if gp == "" {
			gp = filepath.Join(home(), "go")
		}
		bin = filepath.Join(strings.Split(gp, string(os.PathListSeparator))[0], "bin")
	}
	if fi, err := os.Stat(filepath.Join(bin, "steward")); err == nil && fi.Mode().IsRegular() {
		fmt.Fprintf(w, "(steward is in %s, which is not on your PATH: export PATH=\"%s:$PATH\")\n", bin, bin)
		return
	}
	fmt.Fprintf(
		w,
		"(steward is not on your PATH: run `go install .` in the clone, which puts it in %s, then export "+
			"PATH=\"%s:$PATH\")\n",
		bin,
		bin,
	)
}
