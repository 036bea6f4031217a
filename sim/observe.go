package sim

import (
	"context"
	"errors"

	"steward/leases/leaserec"
	"steward/model"
	"steward/model/live"
)

// observe reads the workspace as `steward status` does — the lock directory, the DB and the
// Gitea facts of the claimed items, through the sources' read APIs — and builds the snapshot
// at the fleet's clock, judged by cfg (the workbench's thresholds) with the lease policy the
// workspace's core acts by.
func (f *Fleet) observe(ctx context.Context, cfg model.Config) (*model.Snapshot, error) {
	ws := f.cfg.Workspace
	cfg.Policies = leaserec.LoadPolicies(ws.Env)
	if cfg.Org == "" {
		cfg.Org, cfg.Repo = f.cfg.Owner, f.cfg.Repo
	}
	now := f.sched.clock()
	mws := live.Workspace{LocksDir: ws.LocksDir, DBPath: ws.DBPath, RepoRoot: ws.RepoRoot, DBHost: ws.DBHost}
	in := live.Load(ctx, mws, live.NewProbe(mws.RepoRoot), now)
	g, ok := f.cfg.Tracker.(live.GiteaFacts)
	if !ok {
		return model.Build(in, cfg, now), errors.New("the tracker gives no Gitea facts")
	}
	var claimed []model.Item
	for _, c := range model.Build(in, cfg, now).Claims {
		if c.Item != nil {
			claimed = append(claimed, *c.Item)
		}
	}
	in.Gitea, in.Clarifications, in.GiteaHealth = live.LoadGitea(ctx, g, cfg, claimed, now)
	return model.Build(in, cfg, now), nil
}
