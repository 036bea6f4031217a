package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"steward/config"
	"steward/leases/leaserec"
	"steward/model"
	"steward/model/live"
	"steward/sim"
)

// shellWords splits a line as a POSIX shell would: words apart by spaces, text in single
// quotes taken as written. Anything else a shell would interpret fails the test: the printed
// command must paste as it reads.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	in, has := false, false
	for _, r := range line {
		switch {
		case in && r == '\'':
			in = false
		case in:
			cur.WriteRune(r)
		case r == '\'':
			in, has = true, true
		case r == ' ':
			if has {
				words = append(words, cur.String())
				cur.Reset()
				has = false
			}
		case strings.ContainsRune("\"\\$`;&|<>(){}*?[]!#~", r):
			t.Fatalf("the printed command holds %q, which a shell would interpret: %s", r, line)
		default:
			cur.WriteRune(r)
			has = true
		}
	}
	if in {
		t.Fatalf("unterminated quote in the printed command: %s", line)
	}
	if has {
		words = append(words, cur.String())
	}
	return words
}

// verdicts are what a person reads off a snapshot: each claim's freshness, owner liveness and
// warning, each orphan's kind, each contention's kind and count.
func verdicts(s *model.Snapshot) []string {
	var out []string
	for _, c := range s.Claims {
		out = append(out, fmt.Sprintf("claim %v %s %s: %s, owner %s, warning %v", c.Item, c.LeaseID, c.LockFile, c.Freshness, c.OwnerLiveness, c.Warning))
	}
	for _, o := range s.Orphans {
		out = append(out, fmt.Sprintf("orphan %s %v %s %s", o.Kind, o.Item, o.LeaseID, o.LockFile))
	}
	for _, c := range s.Contention {
		out = append(out, fmt.Sprintf("contention %s %v %d", c.Kind, c.Item, c.Count))
	}
	slices.Sort(out)
	return out
}

// TestDemoKeepPrintsOneCommand: `steward demo --keep` ends with one
// command to paste — no GITEA_LEASE_POLICY_* variables — and that command, run as a real
// steward process with no lease-policy variable in its environment, reads the kept workspace
// with the demo's compressed policy and durations (from the steward.yaml the demo wrote):
// the same verdicts, claim by claim and orphan by orphan, as the demo's own judgement of the
// workspace at the same instant. The seed's default policy judges the same files otherwise,
// so the agreement is the file's doing.
func TestDemoKeepPrintsOneCommand(t *testing.T) {
	bin := realSteward(t) // built (once per test binary) before TMPDIR points into this test's folder
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	const speed = 120
	var out, errb bytes.Buffer
	if code := Main([]string{"demo", "--headless", "--for", "2s", "--speed", fmt.Sprint(speed), "--keep"}, &out, &errb); code != ExitOK {
		t.Fatalf("steward demo --keep: exit %d: %s", code, errb.String())
	}
	text := out.String()
	if strings.Contains(text, "GITEA_LEASE_POLICY") {
		t.Errorf("the --keep exit still prints lease-policy variables:\n%s", text)
	}
	_, after, ok := strings.Cut(text, "\ninspect it with:\n")
	if !ok {
		t.Fatalf("no command printed:\n%s", text)
	}
	line, rest, _ := strings.Cut(after, "\n")
	if strings.Contains(rest, "steward ") {
		t.Errorf("more than one command printed after %q:\n%s", line, rest)
	}
	words := shellWords(t, strings.TrimSpace(line))
	if len(words) < 2 || words[0] != "steward" || words[len(words)-1] != "status" {
		t.Fatalf("printed %q, want one `steward … status` command", line)
	}
	cfgPath := words[slices.Index(words, "--config")+1]
	b, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatalf("the command's config file: %v", err)
	}
	f, err := config.Parse(b)
	if err != nil {
		t.Fatalf("the demo's config file does not parse: %v\n%s", err, b)
	}
	ws := f.Workspaces[f.DefaultWorkspace]
	if !strings.HasPrefix(ws.LocksDir, tmp) || !strings.HasPrefix(ws.DBPath, tmp) {
		t.Fatalf("the config names %q and %q, not the kept workspace under %s", ws.LocksDir, ws.DBPath, tmp)
	}

	// Late enough that the demo's refused claims have left its compressed contention window
	// (30 s at this speed) while the seed's hour still holds them.
	now := time.Now().Add(40 * time.Second).UTC().Truncate(time.Second)
	lws := live.Workspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot}
	in := live.Load(t.Context(), lws, live.NewProbe(lws.RepoRoot), now)
	scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) / speed) }
	demoCfg := model.Config{Policies: leaserec.LoadPolicies(sim.Lookup(sim.PolicyEnv(speed), nil)),
		StalePRQuiet: scale(10 * time.Minute), RefusedWindow: scale(time.Hour)}
	want := verdicts(model.Build(in, demoCfg, now))
	if len(want) == 0 || len(model.Build(in, demoCfg, now).Claims) == 0 {
		t.Fatalf("the kept workspace shows nothing to compare: %v", want)
	}
	seed := verdicts(model.Build(in, model.Config{}, now))
	if slices.Equal(want, seed) {
		t.Fatalf("the seed's default policy judges the kept workspace as the demo did; the test would prove nothing:\n%s", strings.Join(want, "\n"))
	}

	cmd := exec.Command(bin, append(words[1:], "--json", "--now", now.Format(time.RFC3339))...)
	cmd.Env = cleanEnv(t)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s --json --now …: %v\n%s", line, err, se.String())
	}
	var got model.Snapshot
	if err := json.Unmarshal(so.Bytes(), &got); err != nil {
		t.Fatalf("decode status --json: %v\n%s", err, so.String())
	}
	if g := verdicts(&got); !slices.Equal(g, want) {
		t.Errorf("the printed command's verdicts differ from the demo's:\n got:\n  %s\nwant:\n  %s", strings.Join(g, "\n  "), strings.Join(want, "\n  "))
	}
	t.Logf("printed: %s — %d verdicts agree (%d differ under the seed's default policy)", line, len(want), diff(want, seed))
}

// diff counts the lines of a not in b and of b not in a.
func diff(a, b []string) int {
	n := 0
	for _, x := range a {
		if !slices.Contains(b, x) {
			n++
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			n++
		}
	}
	return n
}
