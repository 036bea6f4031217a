package phase

import (
	"context"
	"path/filepath"
	"testing"

	"steward/bench/internal/fleet"
	"steward/model"
)

// TestWorkbenchRunsTheUsersPipeline: the benchmark's workbench is the one `steward ui`
// assembles (app.Open), so the snapshots it draws have each orphan's action previewed by the
// governed core — the annotate step the harness once skipped by building its own live model.
// The fleet of 100 holds one expired claim, an orphan whose action the core previews.
func TestWorkbenchRunsTheUsersPipeline(t *testing.T) {
	m, err := fleet.Generate(filepath.Join(t.TempDir(), "ws"), 100)
	if err != nil {
		t.Fatal(err)
	}
	c := &Config{Meta: m, Width: 160, Height: 48}
	w, _, _, err := c.startWorkbench(context.Background(), c.clock())
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	w.br.await(func(s *model.Snapshot) bool {
		for _, o := range s.Orphans {
			if o.Action != nil && o.Action.Allowed != nil {
				return true
			}
		}
		return false
	})
	w.refresh()
	if _, err := w.br.wait(timeout); err != nil {
		t.Fatalf("no snapshot reached the workbench with an orphan's action previewed: %v", err)
	}
}
