package govern

import (
	"context"
	"testing"
	"time"

	"steward/leases"
	"steward/locks"
)

// TestOneRecordOneClock: on PostgreSQL every lease timestamp is the database's clock, so
// every timestamp steward writes into a lock of that lease must be too — on a host whose
// clock is 5 minutes fast. Before the fix a heartbeat wrote the lock's last_heartbeat_at
// from this host's clock beside an expires_at from the DB's (the lock said its last
// heartbeat came 5 minutes after the lease's), and an archive's archived_at was this
// host's clock beside the lease's ended_at from the DB's.
func TestOneRecordOneClock(t *testing.T) {
	f := newFixtureOn(t, RoleOperator, "postgres")
	f.clock.Add(5 * time.Minute) // this host's clock runs 5 minutes ahead of the DB's
	out := f.claim("s1", 7)
	id, name := out.Detail["lease_id"], out.Detail["lock_file"]
	ctx := context.Background()
	lockTimes := func() (hb, exp time.Time) {
		t.Helper()
		e := locks.ReadFile(f.ws.LocksDir, name)
		wl := e.Record.WorkLease
		if e.Missing || wl == nil || !wl.LastHeartbeatAt.Valid || !wl.ExpiresAt.Valid {
			t.Fatalf("lock %s: %+v", name, e)
		}
		return wl.LastHeartbeatAt.Time, wl.ExpiresAt.Time
	}
	l := f.lease(id)
	if hb, exp := lockTimes(); !exp.Equal(l.ExpiresAt.Time) || !hb.Equal(l.CreatedAt.Time) {
		t.Fatalf("claim: lock last_heartbeat_at %s expires_at %s; lease created_at %s expires_at %s", hb, exp, l.CreatedAt.Raw, l.ExpiresAt.Raw)
	}
	_, hb, err := f.core.Run(ctx, Request{Action: ActionHeartbeat, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if err != nil || hb.Result != ResultSucceeded {
		t.Fatalf("heartbeat: %+v %v", hb, err)
	}
	l = f.lease(id)
	if got, exp := lockTimes(); !got.Equal(l.LastHeartbeatAt.Time) || !exp.Equal(l.ExpiresAt.Time) {
		t.Fatalf("heartbeat on a host 5 minutes fast: lock last_heartbeat_at %s, expires_at %s; lease last_heartbeat_at %s, expires_at %s — one record, two clocks",
			got.Format(time.RFC3339Nano), exp.Format(time.RFC3339Nano), l.LastHeartbeatAt.Raw, l.ExpiresAt.Raw)
	}
	_, rel, err := f.core.Run(ctx, Request{Action: ActionRelease, Target: Target{LeaseID: id, Session: "s1"}}, "")
	if err != nil || rel.Result != ResultSucceeded {
		t.Fatalf("release: %+v %v", rel, err)
	}
	e := locks.ReadFile(f.ws.LocksDir, rel.Detail["archived_as"])
	b, ok := e.Record.Recovery()
	at := leases.ParseTimestamp(b.ArchivedAt)
	if !ok || !at.OK() {
		t.Fatalf("archive %s: recovery %+v ok=%v", rel.Detail["archived_as"], b, ok)
	}
	r, err := leases.OpenPGReader(ctx, f.ws.DBTarget())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	dbNow, err := r.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d := dbNow.Sub(at.Time); d < 0 || d > time.Minute {
		t.Fatalf("archived_at %s, the DB's clock %s after the release: the archive was stamped from another clock than its lease's", b.ArchivedAt, dbNow.Format(time.RFC3339Nano))
	}
}
