package govern

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"steward/govern/actionid"
	"strings"
	"testing"
)

// The read_only refusal says who set it and what could lift it.
func TestReadOnlyRefusalNamesItsSource(t *testing.T) {
	f := newFixture(t, RoleAdmin)
	why := "set by read_only: true in the system config /etc/steward/config.yaml; no user file, variable or flag can lift it"
	ro := New(f.ws, f.audit, Options{Actor: Actor{OSUser: "tester", Role: RoleAdmin}, ReadOnly: true, ReadOnlyReason: why, Now: f.clock.Now})
	t.Cleanup(func() { ro.Close() })
	_, out, _ := ro.Run(context.Background(), Request{Action: actionid.ExpireSweep}, "")
	if out.Code != CodeReadOnly || !strings.Contains(out.Message, why) || !strings.Contains(out.Message, "nothing was recorded") {
		t.Fatalf("refusal %+v", out)
	}
	if err := ro.ResolveByHuman("att-x", ResultFailed, "n"); err == nil || !strings.Contains(err.Error(), why) {
		t.Fatalf("resolve: %v", err)
	}
}

// A read-only audit log creates nothing: not the file, not its folder.
func TestReadOnlyAuditCreatesNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	log := ReadOnlyAudit(filepath.Join(dir, "audit.jsonl"))
	if err := log.Append(Record{Attempt: "att-1", Kind: KindIntent}); !errors.Is(err, errAuditReadOnly) {
		t.Fatalf("append: %v", err)
	}
	if _, err := log.hold("att-1"); err == nil {
		t.Fatal("a read-only log marked an attempt in flight")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("the folder exists: %v", err)
	}
	if recs, _, err := ReadAudit(log.Path()); err != nil || len(recs) != 0 {
		t.Fatalf("reading an absent log: %v %v", recs, err)
	}
}
