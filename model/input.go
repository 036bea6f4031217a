package model

import (
	"time"

	"steward/gitea/gitearec"
	"steward/leases/leaserec"
	"steward/locks/lockrec"
)

// Config tunes classification. The zero value uses the defaults.
type Config struct {
	// Policies resolves lease durations (zero: the seed's defaults).
	Policies leaserec.PolicySet
	// RefusedWindow is how far back claim.refused events count (default 1 h).
	RefusedWindow time.Duration
	// StalePRQuiet is how long an open PR with no live claim may stay quiet
	// before it is stale-pr-no-claim (default 72 h).
	StalePRQuiet time.Duration
	// BlockedLabel routes an item to needs_controller (default status:blocked).
	BlockedLabel string
	// ActivityLimit is how many recent control-plane events the snapshot
	// keeps for the Activity view (default 200).
	ActivityLimit int
	// Org and Repo name the Gitea repository the Gitea facts are about; Remote is the
	// name the supervised system's records give its remote (gitea.remote). A Gitea fact
	// that names no remote is filed under Remote, or, when Remote is empty, under the one
	// remote the DB's work items of Org/Repo name (else, with no such row, the one its
	// lock files name); when they name several, Gitea's facts are joined with nothing and
	// the snapshot says why (Engine.Remote).
	Remote, Org, Repo string
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.RefusedWindow <= 0 {
		c.RefusedWindow = time.Hour
	}
	if c.StalePRQuiet <= 0 {
		c.StalePRQuiet = 72 * time.Hour
	}
	if c.BlockedLabel == "" {
		c.BlockedLabel = gitearec.DefaultBlockedLabel
	}
	if c.ActivityLimit <= 0 {
		c.ActivityLimit = 200
	}
	return c
}

// LockObs is one live lock file as read, with what was observed about its
// owner process and worktree.
type LockObs struct {
	Entry    lockrec.Entry
	PID      int64
	Host     string
	Owner    Liveness
	OwnerWhy string
	// OtherHost is set when Host is not this host: the owner's process and worktree are
	// not observed from here (liveness unknown, never dead).
	OtherHost bool
	Worktree  Worktree
	WorkWhy   string
	// WorkEscapes is set when the worktree path, or a link on it, leads out of the
	// repository root: it was not followed (leases.WorktreeReport.Escapes).
	WorkEscapes bool
	// WorkStatic is set when the worktree verdict needed no look at the file system (no
	// path, another host, a path outside branches/): a re-probe cannot change it.
	WorkStatic bool
	ReadAt     time.Time
}

// LeaseObs is one lease row with what was observed about its owner process
// and worktree (the Evidence leaserec.Classify takes).
type LeaseObs struct {
	Lease leaserec.Lease
	// Host is the host the lease's pid and worktree were judged on: its owner_host, or
	// for a lease without one the DB's host (leases.RowHost).
	Host     string
	Owner    Liveness
	OwnerWhy string
	// OtherHost is set when Host is not this host (see LockObs.OtherHost).
	OtherHost bool
	Worktree  Worktree
	WorkWhy   string
}

// SessionObs is one session row with its process liveness.
type SessionObs struct {
	Session leaserec.Session
	Owner   Liveness
}

// GiteaFact is what Gitea says about one item.
type GiteaFact struct {
	Item       Item
	Found      bool
	Title      string
	State      string // open | closed
	Merged     bool
	Labels     []string
	UpdatedAt  time.Time
	HeadBranch string
	URL        string
}

// DBSections says which sections of the DB were read completely: absence in a
// section is evidence only when it is complete.
type DBSections struct {
	Sessions, Leases, WorkItems, Events bool
}

// Input is everything Build derives a snapshot from: the sources as read,
// with the observations that needed IO already made (see Observe*).
type Input struct {
	Locks       []LockObs
	LocksHealth SourceHealth
	// Unreadable-as-a-whole extras: pointers and retired entries are not
	// claims and are not listed.
	Leases   []LeaseObs
	Sessions []SessionObs
	// SessionsOmitted counts ended sessions the DB read left out.
	SessionsOmitted int
	WorkItems       []leaserec.WorkItem
	// RefLeases are leases named by a lock's lease_id that are not in Leases
	// (looked up by id); a nil value means the id is proven absent.
	RefLeases map[string]*LeaseObs
	Events    []leaserec.Event
	DBHealth  SourceHealth
	DB        DBSections

	Gitea          []GiteaFact
	Clarifications []gitearec.Clarification
	GiteaHealth    SourceHealth

	Findings []string
	// Clock is the clock now was read from (the DB's, or this host's when zero).
	Clock Clock
}
