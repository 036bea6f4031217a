package app

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"steward/attention"
	"steward/attention/notify"
	"steward/config"
	"steward/gitea"
	"steward/govern"
	"steward/locks"
)

// Settings are everything a session is built from. FromConfig fills them from the
// resolved configuration; a surface then sets what is its own (its clock, how the core
// records, the demo's tuning).
type Settings struct {
	// Workspace is the workspace's name (the file's, or "default").
	Workspace string
	// The supervised system's sources (locks_dir, db_path with db_password_file for a
	// postgres:// URL, repo_root, db_host) and steward's audit log (audit_log).
	LocksDir, DBPath, DBPasswordFile, RepoRoot, DBHost string
	AuditPath                                          string
	// Host is the host the lock directory lives on (host; "" = this one): on another
	// host the lock files are not observed from here (model.LocksHere).
	Host string
	// LegacyLock is the legacy single-slot lock file read with the lock directory when it
	// exists ($GITEA_ISSUE_LOCK_FILE, else /tmp/gitea_issue_lock.json); "" reads none.
	LegacyLock string

	// Gitea is the repository the workers coordinate through.
	Gitea Gitea
	// MarkerLabels mark an item blocked pending clarification (marker_labels);
	// BlockedLabel routes an item to a controller (blocked_label).
	MarkerLabels []string
	BlockedLabel string

	// StalePR is how long an open pull request with no live claim may stay quiet
	// (thresholds.stale_pr); ContentionWindow how far back refused claims count
	// (thresholds.contention_window). Zero takes the default.
	StalePR, ContentionWindow time.Duration
	// Attention is how a person hears about what needs them: the SLAs (clarification_sla,
	// attention.*_sla) and the notifications (notify.*).
	Attention Attention
	// Theme is the workbench's theme: auto, dark or light.
	Theme string
	// History, when set, gives the workbench its History view and last-seen mark.
	History *History

	// Env looks up the lease-policy overrides (GITEA_LEASE_POLICY_*: FromConfig answers
	// them from the environment, then from the workspace's lease_policy), the tea CLI's
	// config location and the terminal multiplexer; os.LookupEnv when nil.
	Env func(string) (string, bool)

	// Who acts: the role and the Gitea login recorded as the actor, and the read-only
	// switch with who set it.
	Role           govern.Role
	Login          string
	ReadOnly       bool
	ReadOnlyReason string
	// Audit says how the core records its attempts.
	Audit Audit
	// AuditLog, when set, is the log the core records to (the demo's, shared with its
	// workers); the session does not close it.
	AuditLog *govern.AuditLog

	// Now, when set, is the instant every verdict is judged at (status --now, a test's
	// clock). When nil, verdicts are judged at the control-plane DB's clock on PostgreSQL
	// (the one the governed core fences with) and at HostNow on SQLite.
	Now func() time.Time
	// HostNow is this host's clock (time.Now when nil; a test gives a wrong one).
	HostNow func() time.Time
	// hostClock is set by Open when Now was nil: verdicts follow the DB's clock or this
	// host's, not a fixed instant.
	hostClock bool
	// Step is the core's step hook (crash tests only).
	Step func(string)
	// Warn receives warnings about the Gitea login (a token file others can read); none
	// when nil.
	Warn io.Writer
	// Secrets is the redactor every snapshot and audit record go through; a new one when
	// nil. The Gitea token is added to it.
	Secrets *govern.Redactor
	// Tuning is the live model's cadences (zero: the live model's defaults).
	Tuning Tuning
}

// Attention is how a person hears about attention entries (the workbench and `steward
// watch`): the zero value takes the default SLAs and notifies nobody.
type Attention struct {
	SLAs          attention.SLAs
	Reescalations int
	Bell, Desktop bool
	Command       notify.Command
}

// History is where the workbench keeps its last-seen mark (StateDir/seen), and whether
// "since you left" opens on start.
type History struct {
	StateDir     string
	SinceOnStart bool
}

// Gitea selects the Gitea repository.
type Gitea struct {
	// Repo is owner/name ("" when none is configured).
	Repo string
	// Remote is the name the supervised system's records give the repository's remote
	// (gitea.remote; the seed's "prgs"): Gitea's facts are joined with the lock files' and
	// the DB's items under it. "" infers it from the DB's rows for Repo (model.Config.Remote).
	Remote string
	// URL, TeaLogin and Token choose the login (gitea.url, gitea.tea_login, gitea.token);
	// without them $STEWARD_GITEA_TOKEN or the tea CLI's default login.
	URL, TeaLogin, Token string
	// Off: Gitea is not read (--no-gitea).
	Off bool
	// Client, when set, is used as it is (the demo's); Repo, URL, TeaLogin and Token are
	// then ignored.
	Client *gitea.Client
}

// Audit is how the session's core records.
type Audit int

const (
	// AuditNone: a preview-only core with no log (steward status): it says what its guards
	// allow and applies nothing.
	AuditNone Audit = iota
	// AuditWrite: the core appends to the log at AuditPath (only reads it when ReadOnly).
	AuditWrite
)

// Tuning is the live model's cadences.
type Tuning struct {
	GiteaEvery, ProbeEvery, WorktreeEvery, Resync time.Duration
}

// FromConfig returns the settings r resolves — every key of the configuration (see
// config.Keys) — with the legacy lock from env. The commands refuse a configuration with
// errors first; a value that still does not read is an error here, never a silent
// default (FromConfig then returns the settings it could read with the error).
func FromConfig(r *config.Resolved, env func(string) (string, bool)) (Settings, error) {
	var bad []string
	get := func(k string) string { return strings.TrimSpace(r.Get(k).Value) }
	dur := func(k string) time.Duration {
		d, err := time.ParseDuration(get(k))
		if err != nil || d <= 0 {
			bad = append(bad, k)
			return 0
		}
		return d
	}
	boolean := func(k string) bool {
		b, err := strconv.ParseBool(get(k))
		if err != nil {
			bad = append(bad, k)
		}
		return b
	}
	s := Settings{
		LocksDir: get(config.KeyLocksDir), DBPath: get(config.KeyDBPath), DBPasswordFile: get(config.KeyDBPasswordFile),
		RepoRoot: get(config.KeyRepoRoot), DBHost: get(config.KeyDBHost), AuditPath: get(config.KeyAuditLog),
		Workspace: r.Name(), Host: get(config.KeyHost),
		LegacyLock: legacyLock(env),
		Gitea: Gitea{
			URL:      get(config.KeyGiteaURL),
			TeaLogin: get(config.KeyTeaLogin),
			Token:    r.Get(config.KeyGiteaToken).Value,
			Remote:   get(config.KeyGiteaRemote),
		},
		BlockedLabel: get(config.KeyBlockedLabel),
		StalePR:      dur(config.KeyStalePR), ContentionWindow: dur(config.KeyContentionWindow),
		Attention: Attention{
			SLAs: attention.SLAs{Clarification: dur(config.KeyClarificationSLA), Orphan: dur(config.KeyOrphanSLA),
				Collision: dur(config.KeyCollisionSLA), Source: dur(config.KeySourceSLA)},
			Bell: boolean(config.KeyNotifyBell), Desktop: boolean(config.KeyNotifyDesktop),
		},
		Theme:          get(config.KeyTheme),
		Env:            r.PolicyLookup(env),
		Login:          r.Grant.Login,
		ReadOnly:       r.Grant.ReadOnly,
		ReadOnlyReason: r.Grant.ReadOnlyReason(),
	}
	if owner, repo := get(config.KeyGiteaOwner), get(config.KeyGiteaRepo); owner != "" && repo != "" {
		s.Gitea.Repo = owner + "/" + repo
	}
	for _, m := range strings.Split(get(config.KeyMarkerLabels), ",") {
		if m = strings.TrimSpace(m); m != "" {
			s.MarkerLabels = append(s.MarkerLabels, m)
		}
	}
	if role, err := govern.ParseRole(r.Grant.Role); err == nil {
		s.Role = role
	}
	n, err := strconv.Atoi(get(config.KeyNotifyReescalations))
	if err != nil || n < 0 {
		bad = append(bad, config.KeyNotifyReescalations)
	}
	s.Attention.Reescalations = n
	argv, err := config.ParseCommand(r.Get(config.KeyNotifyCommand).Value)
	if err != nil {
		bad = append(bad, config.KeyNotifyCommand)
	}
	s.Attention.Command = notify.Command{Argv: argv, Timeout: dur(config.KeyNotifyTimeout)}
	if len(bad) > 0 {
		return s, fmt.Errorf("the settings %s do not read (run `steward config check`)", strings.Join(bad, ", "))
	}
	return s, nil
}

// legacyLock is the legacy single-slot lock file env names.
func legacyLock(env func(string) (string, bool)) string {
	if env == nil {
		env = os.LookupEnv
	}
	return locks.LegacyFileFrom(env)
}

// host is this host's clock: HostNow, else time.Now.
func (s Settings) host() func() time.Time {
	if s.HostNow != nil {
		return s.HostNow
	}
	return time.Now
}
