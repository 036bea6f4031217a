package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// File is the configuration file as written.
type File struct {
	// DefaultWorkspace names the workspace used when none is chosen.
	DefaultWorkspace string `yaml:"default_workspace,omitempty"`
	// Workspaces by name.
	Workspaces map[string]Workspace `yaml:"workspaces,omitempty"`
	// MarkerLabels mark an item blocked pending clarification.
	MarkerLabels []string `yaml:"marker_labels,omitempty"`
	// BlockedLabel routes an item to needs_controller.
	BlockedLabel string `yaml:"blocked_label,omitempty"`
	// ClarificationSLA is how long a question may wait before it is overdue.
	ClarificationSLA Duration `yaml:"clarification_sla,omitempty"`
	// Thresholds tune the orphan and contention rules.
	Thresholds Thresholds `yaml:"thresholds,omitempty"`
	// Roles maps a Gitea login to its steward role (viewer, operator, controller, admin).
	Roles map[string]string `yaml:"roles,omitempty"`
	// Theme is auto, dark or light.
	Theme string `yaml:"theme,omitempty"`
	// ReadOnly refuses every change (enforced by the governed core).
	ReadOnly *bool `yaml:"read_only,omitempty"`
	// Notify says how a person hears about attention entries (docs/attention.md).
	Notify Notify `yaml:"notify,omitempty"`
	// Attention holds the SLAs of the attention entries besides clarification_sla.
	Attention Attention `yaml:"attention,omitempty"`
}

// Notify is how a person hears about attention entries (docs/attention.md).
type Notify struct {
	// Bell rings the terminal bell (default true).
	Bell *bool `yaml:"bell,omitempty"`
	// Desktop writes the desktop-notification sequences OSC 9 and OSC 777 (default true).
	Desktop *bool `yaml:"desktop,omitempty"`
	// Command is a program and its arguments, run directly (never through a shell) with
	// the event's fields as environment variables.
	Command []string `yaml:"command,omitempty"`
	// Timeout bounds one run of the command (default 10s).
	Timeout Duration `yaml:"timeout,omitempty"`
	// Reescalations is how many more times an entry escalates after its first SLA breach.
	Reescalations *int `yaml:"reescalations,omitempty"`
}

// Attention holds the SLAs of attention entries other than questions.
type Attention struct {
	OrphanSLA    Duration `yaml:"orphan_sla,omitempty"`
	CollisionSLA Duration `yaml:"collision_sla,omitempty"`
	SourceSLA    Duration `yaml:"source_sla,omitempty"`
}

// Workspace is one supervised repository's stores.
type Workspace struct {
	LocksDir string `yaml:"locks_dir,omitempty"`
	// DBPath is the control-plane SQLite file (the embedded default); DBURL a
	// postgres:// URL instead, never carrying the password, which DBPasswordFile (a file
	// only its owner can read) or PGPASSWORD / PGPASSFILE supply. Set one of the two.
	DBPath         string `yaml:"db_path,omitempty"`
	DBURL          string `yaml:"db_url,omitempty"`
	DBPasswordFile string `yaml:"db_password_file,omitempty"`
	RepoRoot       string `yaml:"repo_root,omitempty"`
	// DBHost is the host the control-plane DB was written on, when that is another
	// machine (a DB copied or mounted here): its rows without a host are then unknown,
	// never dead. Empty: this host, the seed's single-host model.
	DBHost   string `yaml:"db_host,omitempty"`
	AuditLog string `yaml:"audit_log,omitempty"`
	Gitea    Gitea  `yaml:"gitea,omitempty"`
	// Host is the host the workspace's lock directory lives on. Empty: this host. On
	// another host the lock files are not observed from here (docs/postgres.md, "What a
	// host cannot see"): only the DB-level verdicts are shown.
	Host string `yaml:"host,omitempty"`
	// LeasePolicy overrides the supervised system's lease policy for this workspace, by task
	// class and field (author_issue_work: {initial_ttl_minutes: 0.5}): the values its own
	// variables GITEA_LEASE_POLICY_<CLASS>_<FIELD> would set, which still win when set. A
	// workspace whose workers run a compressed policy (the demo's) is read alike.
	LeasePolicy map[string]map[string]float64 `yaml:"lease_policy,omitempty"`
}

// Gitea is how a workspace reaches its repository: a tea login name, or a URL with a
// token (inline, or better in a token file).
type Gitea struct {
	TeaLogin  string `yaml:"tea_login,omitempty"`
	URL       string `yaml:"url,omitempty"`
	Token     string `yaml:"token,omitempty"`
	TokenFile string `yaml:"token_file,omitempty"`
	Owner     string `yaml:"owner,omitempty"`
	Repo      string `yaml:"repo,omitempty"`
	// Remote is the name the supervised system's records give this repository's remote
	// (lock files' and work_items' remote: the seed's "prgs"). Empty: inferred from the
	// control-plane DB's rows for owner/repo when they agree.
	Remote string `yaml:"remote,omitempty"`
}

// Thresholds tune the live model's rules.
type Thresholds struct {
	// StalePR is how long an open PR with no live claim may stay quiet (stale-pr-no-claim).
	StalePR Duration `yaml:"stale_pr,omitempty"`
	// ContentionWindow is how far back refused claims count as contention.
	ContentionWindow Duration `yaml:"contention_window,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("90s", "24h").
type Duration time.Duration

// UnmarshalYAML decodes a Go duration string; a bare number or a negative value is an error.
// The error is a *yaml.TypeError, so the decoder goes on with the rest of the file.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: want a duration such as 24h", n.Line)}}
	}
	v, err := time.ParseDuration(strings.TrimSpace(n.Value))
	if err != nil || v <= 0 {
		return &yaml.TypeError{
			Errors: []string{
				fmt.Sprintf("line %d: %q is not a positive duration such as 24h or 90m", n.Line, clip(n.Value)),
			},
		}
	}
	*d = Duration(v)
	return nil
}

// MarshalYAML encodes the duration as a Go duration string.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

// maxFileSize caps the configuration file; a larger one is refused unread.
const maxFileSize = 1 << 20

// errTooLarge is returned by Parse for input over maxFileSize.
var errTooLarge = errors.New("config: file larger than 1 MiB")

// Parse decodes a configuration file. Unknown keys are errors (a typo never silently
// falls back to a default). Error messages quote line numbers, never secret values.
//
// Every problem is reported, not the first: the error joins them ("; "). Load goes further
// and keeps what the rest of the file says (parseAll).
func Parse(data []byte) (File, error) {
	if len(data) > maxFileSize {
		return File{}, errTooLarge
	}
	f, issues := parseAll(data)
	if err := joinIssues(issues); err != nil {
		return File{}, err
	}
	return f, nil
}

// scrubYAML removes any token-looking value of data that the YAML error quotes.
func scrubYAML(msg string, data []byte) string {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if lk := strings.ToLower(k); !ok ||
			!(strings.Contains(lk, "token") || strings.Contains(lk, "db_url") || strings.Contains(lk, "password")) {
			continue
		}
		if v = strings.Trim(strings.TrimSpace(v), `"'`); len(v) >= 4 {
			msg = hide(msg, v)
		}
	}
	return msg
}

// hide replaces secret in msg, whole or cut short as a message quotes a value: clipped to 40
// bytes (clip), or to its first 7 bytes and "..." (the YAML decoder's errors, for a value
// over 10 bytes).
func hide(msg, secret string) string {
	for _, form := range []string{secret, clip(secret), secret[:min(len(secret), 7)] + "..."} {
		msg = strings.ReplaceAll(msg, form, "[hidden]")
	}
	return msg
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
