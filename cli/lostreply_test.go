package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"steward/govern"
	"steward/leases"
	"steward/leases/leaserec"
	"steward/leases/pgtest"
	"steward/leases/pgtest/pgproxy"
)

// TestLostCommitReplyFromTheCommandLine: `steward claim` and `steward release` on
// PostgreSQL through a connection that forwards the COMMIT to the server and closes
// without relaying its answer. Each prints unknown / outcome_unknown with "verify before
// retrying" and exits 4 (exitUnknown); the audit log records the attempt unknown; the DB
// holds what the server committed (the new active lease; the lease released); `steward
// audit verify` reads the attempt's mark back and prints what is there and what finishes
// it — the lease without its lock (release it and claim again), the lease released with
// its lock still live — leaving both unknown for a person, never failed.
//
// Before the fix both printed "failed  … (not_attempted …)" and exited 1, the audit log
// said failed, and audit verify said "no unknown outcomes to verify".
func TestLostCommitReplyFromTheCommandLine(t *testing.T) {
	url := pgtest.NewDB(t)
	if code, out := run(t, "init", "--db", url, "--as-role", "admin"); code != ExitOK {
		t.Fatalf("init: %d %s", code, out)
	}
	px := pgproxy.Start(t, url)
	dir := t.TempDir()
	locksDir, repo, audit := filepath.Join(dir, "locks"), filepath.Join(dir, "repo"), filepath.Join(dir, "audit.jsonl")
	for _, d := range []string{locksDir, filepath.Join(repo, "branches")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	flags := []string{"--locks", locksDir, "--db", px.URL(), "--repo-root", repo, "--audit", audit, "--as-role", "operator"}
	claimArgs := append([]string{"claim", "--org", "acme", "--repo", "widgets", "--number", "7", "--session", "s1"}, flags...)
	commit := func(s pgproxy.Statement) bool { return s.IsCommit() && s.TxWrote }
	attemptRE := regexp.MustCompile(`attempt (att-[0-9A-Za-z-]+)`)
	lost := func(args []string, action string) string {
		t.Helper()
		f := px.Arm(pgproxy.Cut{Match: commit, N: 1, When: pgproxy.ReplyLost})
		code, out := run(t, args...)
		<-f.Done()
		if code != exitUnknown || !strings.Contains(out, "unknown  "+action+"  (outcome_unknown") ||
			!strings.Contains(out, "may have taken effect — verify before retrying") {
			t.Fatalf("%s with the COMMIT's answer lost: exit %d\n%s", action, code, out)
		}
		m := attemptRE.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no attempt in\n%s", out)
		}
		recs, _, err := govern.ReadAudit(audit)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range govern.Attempts(recs) {
			if a.ID == m[1] && (a.Outcome == nil || a.Outcome.Result != govern.ResultUnknown || a.Outcome.Disposition != govern.DispositionOutcomeUnknown) {
				t.Fatalf("the audit log records %+v", a.Outcome)
			}
		}
		return m[1]
	}
	verify := func(attempt, evidence string) {
		t.Helper()
		code, out := run(t, append([]string{"audit", "verify"}, flags...)...)
		if code != ExitOK || !strings.Contains(out, attempt+"  unknown") || !strings.Contains(out, evidence) {
			t.Fatalf("audit verify: exit %d, want %s unknown with %q\n%s", code, attempt, evidence, out)
		}
	}
	r, err := leases.OpenPGReader(context.Background(), leases.Target{Loc: url})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	item := leaserec.WorkRef{Remote: "origin", Org: "acme", Repo: "widgets", Kind: leaserec.KindIssue, Number: 7}

	// The proxy forwarded the COMMIT and closed: the server may still be reading it when the
	// command has already printed unknown. Its backend, named by the attempt, ends only after
	// the COMMIT ran (the server reads its socket in order), so the test reads the DB once the
	// server runs nothing of the attempt — the server's own condition, not a pause.
	settled := func(attempt string) {
		t.Helper()
		p, ok := any(r).(leases.Pending)
		if !ok {
			t.Fatal("the PostgreSQL reader reports no pending transactions")
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			bs, err := p.Pending(context.Background(), attempt)
			if err != nil {
				t.Fatalf("reading pg_stat_activity: %v", err)
			}
			if len(bs) == 0 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the server still runs attempt %s two minutes after its client left: %+v", attempt, bs)
			}
			time.Sleep(5 * time.Millisecond) // the poll's interval; the condition is the synchronisation
		}
	}

	claim := lost(claimArgs, "worker.claim")
	settled(claim)
	active, err := r.LeasesForWorkItem(context.Background(), item)
	if err != nil || len(active) != 1 || active[0].SessionID != "s1" {
		t.Fatalf("the server committed the claim: the lease must be there: %+v %v", active, err)
	}
	verify(claim, "is active but its lock file is missing: release the lease (steward release) and claim again")

	// The worker does as the evidence says: release, and claim again.
	if code, out := run(t, append([]string{"release", "--lease", active[0].LeaseID, "--session", "s1"}, flags...)...); code != ExitOK {
		t.Fatalf("release of the lease without its lock: %d\n%s", code, out)
	}
	code, out := run(t, claimArgs...)
	m := regexp.MustCompile(`lease_id: (\S+)`).FindStringSubmatch(out)
	if code != ExitOK || m == nil {
		t.Fatalf("claim again: %d\n%s", code, out)
	}

	rel := lost(append([]string{"release", "--lease", m[1], "--session", "s1"}, flags...), "worker.release")
	settled(rel)
	if l, ok, err := r.LeaseByID(context.Background(), m[1]); err != nil || !ok || l.Status != leaserec.StatusReleased {
		t.Fatalf("the server committed the release: the lease must be released: %+v %v", l, err)
	}
	verify(rel, "released by this attempt but its lock")
}
