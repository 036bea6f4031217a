package tui

import (
	"fmt"
	"reflect"
	"testing"
)

// TestParallelRebuildIsTheSequentialOne: the first digest of a large fleet builds its rows
// on every core; each list's rows, their order and every field but the detail builder
// (a function) are what one core builds — claims, orphans and sessions alike (run with
// -race: the builds share only the digest's fixed configuration).
func TestParallelRebuildIsTheSequentialOne(t *testing.T) {
	defer func(n int) { parallelRows = n }(parallelRows)
	s := bigSnapshot(5000)
	digestWith := func(min int) *data {
		parallelRows = min
		cfg := digestConfig(New(Options{}).opts)
		return digest(s, cfg)
	}
	one, many := digestWith(1<<30), digestWith(64)
	if len(one.Rows) == 0 {
		t.Fatal("no rows digested")
	}
	for page, want := range one.Rows {
		got := many.Rows[page]
		if len(got) != len(want) {
			t.Fatalf("page %v: %d rows on every core, %d on one", page, len(got), len(want))
		}
		for i := range want {
			a, b := *got[i], *want[i]
			a.detail, b.detail = nil, nil
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("page %v row %d: on every core %s, on one %s", page, i, fmt.Sprint(a.Key), fmt.Sprint(b.Key))
			}
		}
	}
}
