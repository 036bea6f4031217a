package reliability_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/cli"
	"steward/govern"
	"steward/leases/leaserec"
	"steward/leases/leasestest"
)

// TestAuditDiskFullRefusesBeforeAnyEffect: the audit log sits on a device that is always
// full (/dev/full answers every write with ENOSPC — a real full disk, without a mount).
// `steward lease reclaim-expired` refuses audit_unavailable / not_attempted and the lease,
// the DB file and the locks directory are exactly as before; with the disk back, the same
// command succeeds. (govern's TestAuditUnavailableRefusesBeforeAnyEffect holds the core's
// side with an injected failing writer.)
func TestAuditDiskFullRefusesBeforeAnyEffect(t *testing.T) {
	t.Parallel()
	if fi, err := os.Stat("/dev/full"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("/dev/full is needed for a real full disk: %v", err)
	}
	w := newWorkspace(t)
	exp := leaserec.FormatTime(time.Now().Add(-time.Hour))
	leasestest.Insert(t, w.ws.DBPath, []leasestest.Session{{SessionID: "s1", Role: "author"}},
		[]leasestest.Lease{{LeaseID: "L1", SessionID: "s1", Role: "author", TaskClass: "author_issue_work",
			Work: leasestest.Work(leaserec.KindIssue, 5), CreatedAt: exp, ExpiresAt: exp}})
	db := sqlDB(t, w.ws.DBPath)
	execAll(t, db, "PRAGMA wal_checkpoint(TRUNCATE)")
	db.Close()
	before, err := os.ReadFile(w.ws.DBPath)
	must(t, err)
	must(t, os.MkdirAll(filepath.Dir(w.audit), 0o700))
	must(t, os.Symlink("/dev/full", w.audit))

	code, out, errs := steward(t, append([]string{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator", "--json"}, w.flags()...)...)
	var o govern.Outcome
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatalf("exit %d, not an outcome: %v\n%s%s", code, err, out, errs)
	}
	if code != cli.ExitRefused || o.Code != govern.CodeAuditUnavailable || o.Disposition != govern.DispositionNotAttempted {
		t.Fatalf("exit %d, outcome %+v; want refused audit_unavailable not_attempted", code, o)
	}
	if !strings.Contains(o.Message, "no space left on device") {
		t.Errorf("the message does not name the full disk: %q", o.Message)
	}
	after, err := os.ReadFile(w.ws.DBPath)
	must(t, err)
	if !bytes.Equal(before, after) {
		t.Fatal("the DB changed although nothing could be audited")
	}
	if _, err := os.Stat(w.ws.DBPath + "-wal"); err == nil {
		if fi, _ := os.Stat(w.ws.DBPath + "-wal"); fi.Size() > 0 {
			t.Fatal("the DB's WAL holds a write although nothing could be audited")
		}
	}

	// The disk has room again: the same command applies and leaves its records.
	must(t, os.Remove(w.audit))
	code, out, errs = steward(t, append([]string{"lease", "reclaim-expired", "--lease", "L1", "--as-role", "operator", "--json"}, w.flags()...)...)
	if code != cli.ExitOK {
		t.Fatalf("with room again: exit %d\n%s%s", code, out, errs)
	}
	recs, finds, err := govern.ReadAudit(w.audit)
	must(t, err)
	if len(finds) > 0 || len(govern.Attempts(recs)) != 1 {
		t.Fatalf("audit after recovery: %d attempts, findings %v", len(govern.Attempts(recs)), finds)
	}
}
