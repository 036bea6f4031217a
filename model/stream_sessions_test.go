package model

import (
	"fmt"
	"slices"
	"testing"
)

// TestStreamListsSessionsAsBuildDoes: the streamed read yields the sessions in the
// snapshot's order, by session id, whatever the order of the rows (a dozen, so that
// an order that merely follows the rows or a map's cannot pass by chance).
func TestStreamListsSessionsAsBuildDoes(t *testing.T) {
	in := baseInput()
	for i := 12; i > 0; i-- {
		in.Sessions = append(in.Sessions, sess(fmt.Sprintf("s%02d", i*7%13), "active"))
	}
	var want []string
	for _, s := range Build(in, Config{}, now).Sessions {
		want = append(want, s.SessionID)
	}
	if !slices.IsSorted(want) || len(want) != 12 {
		t.Fatalf("Build lists %q; want 12 ids in order", want)
	}
	var got []string
	for s := range NewStream(in, NewLeaseStore(), Config{}, now).Sessions {
		got = append(got, s.SessionID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("Stream lists %q, want %q (Build's)", got, want)
	}
}
