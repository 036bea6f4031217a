package app

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"time"

	"steward/history"
	"steward/history/gather"
	"steward/tui"
)

// historyOptions gives the workbench its History view: the evidence gathered read-only
// from src (no Gitea: a fleet-wide view), and the last-seen mark under stateDir/seen.
func historyOptions(o *tui.Options, src gather.Sources, stateDir string, sinceOnStart bool) {
	o.History = func(ctx context.Context) (*history.Evidence, error) {
		return gather.Read(ctx, src, gather.Options{}), nil
	}
	marks := gather.Marks{
		Dir:       filepath.Join(stateDir, "seen"),
		Forbidden: []string{src.LocksDir, filepath.Dir(src.DB.Loc)},
	}
	user := OSUser()
	key := gather.Key(user, src)
	o.LastSeen = func() (time.Time, bool, error) { return marks.Load(key) }
	o.SaveSeen = func(t time.Time) error { return marks.Save(key, user, src.LocksDir+" "+src.DB.String(), t) }
	o.SinceOnStart = sinceOnStart
}

// OSUser is the user running steward, as its last-seen marks are keyed.
func OSUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return fmt.Sprintf("uid-%d", os.Getuid())
}
