package app

import (
	"context"
	"errors"
	"fmt"

	"steward/config"
)

// AllFromConfig maps every workspace config.LoadAll resolved onto its settings
// (FromConfig, one per workspace, in the same order: the default one first).
func AllFromConfig(rs []*config.Resolved, env func(string) (string, bool)) ([]Settings, error) {
	out := make([]Settings, 0, len(rs))
	for _, r := range rs {
		s, err := FromConfig(r, env)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: %w", r.Name(), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// OpenAll opens one session per workspace — each through Open, the one assembly — in the
// order given. A workspace that cannot be opened closes the ones opened before it and is
// the error.
func OpenAll(ctx context.Context, all []Settings) ([]*Session, error) {
	out := make([]*Session, 0, len(all))
	for _, s := range all {
		sess, err := Open(ctx, s)
		if err != nil {
			for _, o := range out {
				err = errors.Join(err, o.Close())
			}
			return nil, fmt.Errorf("workspace %s: %w", s.Workspace, err)
		}
		out = append(out, sess)
	}
	return out, nil
}

// CloseAll closes every session of OpenAll.
func CloseAll(ss []*Session) error {
	var err error
	for _, s := range ss {
		err = errors.Join(err, s.Close())
	}
	return err
}

// Name is the session's workspace name.
func (sess *Session) Name() string { return sess.settings.Workspace }
