package leases_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"steward/leases"
	"steward/leases/pgtest/pgproxy"
)

// TestPGStoreSaysWhetherItsWritesMayHaveLanded: a transition through a connection cut at
// each step tells its caller what the cut means. Broken before any write was sent: a
// definitive error, nothing committed. Broken once a write or the COMMIT was on the wire
// (dropped on the way, or run by the server with its answer lost): ErrMaybeSent — and
// after a lost COMMIT answer the lease is indeed there. The errors stay DBErrors with
// their sentinel (ErrUnreachable) and never a raw driver error.
func TestPGStoreSaysWhetherItsWritesMayHaveLanded(t *testing.T) {
	firstWrite := func(s pgproxy.Statement) bool { return s.InTx && s.Write }
	clock := func(s pgproxy.Statement) bool { return s.InTx && strings.Contains(s.SQL, "clock_timestamp()") }
	commit := func(s pgproxy.Statement) bool { return s.IsCommit() && s.TxWrote }
	for _, c := range []struct {
		name      string
		cut       pgproxy.Cut
		maybeSent bool
		committed bool
	}{
		{"the clock's answer lost, before any write", pgproxy.Cut{Match: clock, When: pgproxy.ReplyLost}, false, false},
		{"the first write dropped on its way", pgproxy.Cut{Match: firstWrite, When: pgproxy.Before}, true, false},
		{"the first write's answer lost", pgproxy.Cut{Match: firstWrite, When: pgproxy.ReplyLost}, true, false},
		{"the COMMIT never sent", pgproxy.Cut{Match: commit, When: pgproxy.Before}, true, false},
		{"the COMMIT's answer lost", pgproxy.Cut{Match: commit, When: pgproxy.ReplyLost}, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tg, raw := newPG(t)
			px := pgproxy.Start(t, tg.Loc)
			s := openPGStore(t, leases.Target{Loc: px.URL()})
			f := px.Arm(c.cut)
			out, err := s.Claim(context.Background(), claimReq("s1", 1), now)
			<-f.Done()
			var de *leases.DBError
			if err == nil || !errors.As(err, &de) || !errors.Is(err, leases.ErrUnreachable) {
				t.Fatalf("claim through a cut connection: %+v %v", out, err)
			}
			if got := errors.Is(err, leases.ErrMaybeSent); got != c.maybeSent {
				t.Fatalf("ErrMaybeSent %v, want %v: %v", got, c.maybeSent, err)
			}
			var n int
			if err := raw.QueryRow(`SELECT count(*) FROM leases WHERE session_id = 's1' AND status = 'active'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if (n == 1) != c.committed {
				t.Fatalf("%d active leases after the cut", n)
			}
		})
	}
}

// TestPGPendingSeesTheServersTransaction: while a COMMIT is held on its way (its client
// already gone), the server's session is still inside the attempt's transaction, and
// PGReader.Pending names it; once the COMMIT has landed, nothing is pending and the lease
// is there. A transition run for no attempt is never named.
func TestPGPendingSeesTheServersTransaction(t *testing.T) {
	tg, _ := newPG(t)
	px := pgproxy.Start(t, tg.Loc)
	s := openPGStore(t, leases.Target{Loc: px.URL()})
	r, err := leases.OpenPGReader(context.Background(), tg)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := leases.WithAttempt(context.Background(), "att-20260101T000000-0123456789ab")
	f := px.Arm(pgproxy.Cut{Match: func(s pgproxy.Statement) bool { return s.IsCommit() && s.TxWrote }, When: pgproxy.Hold})
	if _, err := s.Claim(ctx, claimReq("s1", 1), now); !errors.Is(err, leases.ErrMaybeSent) {
		t.Fatalf("claim whose COMMIT is held: %v", err)
	}
	bs, err := r.Pending(context.Background(), "att-20260101T000000-0123456789ab")
	if err != nil || len(bs) != 1 || bs[0].PID <= 0 || bs[0].Since.IsZero() {
		t.Fatalf("pending while the COMMIT is held: %+v %v", bs, err)
	}
	if other, err := r.Pending(context.Background(), "att-20260101T000000-ffffffffffff"); err != nil || len(other) != 0 {
		t.Fatalf("another attempt is pending: %+v %v", other, err)
	}
	f.Release()
	<-f.Done()
	if bs, err := r.Pending(context.Background(), "att-20260101T000000-0123456789ab"); err != nil || len(bs) != 0 {
		t.Fatalf("pending after the COMMIT landed: %+v %v", bs, err)
	}
	ls, err := r.LeasesForWorkItem(context.Background(), claimReq("s1", 1).Work)
	if err != nil || len(ls) != 1 {
		t.Fatalf("the held COMMIT landed: %+v %v", ls, err)
	}
}
