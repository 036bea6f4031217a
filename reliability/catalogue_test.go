package reliability_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"steward/model"
)

// hostileDir holds the committed hostile lock files; the cases below that cannot be
// committed (a 50 MB file, a FIFO, links, a directory, a socket, a name with an escape)
// are made at test time.
const hostileDir = "../testdata/hostile/locks"

// expect is what the snapshot must say about one hostile lock file. Every field that is
// set must hold; at least one names the case, so nothing is dropped silently.
type expect struct {
	// orphan: an orphan of this kind names the file.
	orphan model.OrphanKind
	// evidence: some claim or orphan naming the file carries evidence containing this.
	evidence string
	// finding: a snapshot finding contains this.
	finding string
	// contract: a claim naming the file has this contract verdict.
	contract string
	// freshness: a claim naming the file has this freshness.
	freshness string
	// owner: a claim naming the file has this owner liveness.
	owner model.Liveness
	// contention: a contention record of this kind names the file.
	contention model.ContentionKind
	// notLock: the file is not a lock (a session pointer): no claim or orphan names it.
	notLock bool
}

// lockCases is the catalogue of committed hostile lock files. TestHostileCatalogue fails
// when a file has no case or a case no file, so the two stay one list.
var lockCases = map[string]expect{
	"truncated.json":            {orphan: model.OrphanUnreadableLock, evidence: "truncated-json"},
	"syntax-missing-colon.json": {orphan: model.OrphanUnreadableLock, evidence: "invalid-json"},
	"trailing-garbage.json":     {orphan: model.OrphanUnreadableLock, evidence: "trailing data"},
	"nan-literal.json":          {orphan: model.OrphanUnreadableLock, evidence: "invalid-json"},
	"bom-prefix.json":           {orphan: model.OrphanUnreadableLock, evidence: "invalid-json: offset 0"},
	"invalid-utf8.json":         {orphan: model.OrphanUnreadableLock, evidence: "invalid-utf8"},
	"nul-byte.json":             {orphan: model.OrphanUnreadableLock, evidence: "nul-byte"},
	"empty.json":                {orphan: model.OrphanUnreadableLock, evidence: "empty"},
	"whitespace-only.json":      {orphan: model.OrphanUnreadableLock, evidence: "empty"},
	"top-level-array.json":      {orphan: model.OrphanUnreadableLock, evidence: "not-object: top level is a JSON array"},
	"top-level-null.json":       {orphan: model.OrphanUnreadableLock, evidence: "not-object: top level is a JSON null"},
	"top-level-string.json":     {orphan: model.OrphanUnreadableLock, evidence: "not-object: top level is a JSON string"},
	"deep-nesting.json":         {orphan: model.OrphanUnreadableLock, evidence: "nesting deeper than"},
	"empty-object.json":         {orphan: model.OrphanIncompleteLock, evidence: "<no lock record>", contract: "absent"},
	"wrong-type-issue-number.json": {orphan: model.OrphanIncompleteLock, evidence: "issue_number: want integer, got string",
		contract: "incomplete"},
	"wrong-type-work-lease.json": {orphan: model.OrphanIncompleteLock, evidence: "work_lease: want object, got string"},
	"wrong-type-expires-at.json": {orphan: model.OrphanLockNeverExpires, evidence: "work_lease.expires_at: want string, got number"},
	"wrong-type-claimant.json":   {orphan: model.OrphanIncompleteLock, evidence: "work_lease.claimant: want object, got array"},
	"duplicate-keys.json": {evidence: "owner_session: duplicate key; the last value wins", contract: "canonical",
		freshness: "active"},
	"huge-issue-number.json":     {orphan: model.OrphanIncompleteLock, evidence: "got number 99999999999999999999999999"},
	"huge-generation.json":       {evidence: "lock_generation: want integer, got number 1e308", contract: "canonical"},
	"negative-issue-number.json": {evidence: "issue_number: -109 is not a positive issue number"},
	"zero-issue-number.json":     {evidence: "issue_number: 0 is not a positive issue number"},
	"float-issue-number.json":    {orphan: model.OrphanIncompleteLock, evidence: "got number 110.5"},
	"negative-generation.json":   {evidence: "lock_generation: -4 is not a generation"},
	// pid -1 would be kill(-1, 0): every process. It is never probed.
	"pid-minus-one.json": {evidence: "pid: -1 is not a process id", owner: model.LivenessUnknown},
	// 2^40 truncates to pid 0 in kill(2) (this process group: "alive"); it is unknown.
	"pid-truncates-to-zero.json":     {evidence: "pid: 1099511627776 is not a process id", owner: model.LivenessUnknown},
	"expiry-far-past.json":           {evidence: "0001-01-01T00:00:00Z (recorded)", freshness: "expired"},
	"expiry-far-future.json":         {evidence: "9999-12-31T23:59:59Z (recorded)", freshness: "active"},
	"expiry-year-10000.json":         {orphan: model.OrphanLockNeverExpires, evidence: "10000-01-01T00:00:00Z (unparseable)"},
	"expiry-no-zone.json":            {orphan: model.OrphanLockNeverExpires, evidence: `not an RFC 3339 timestamp: "2026-07-24T06:10:00"`},
	"expiry-naive-space.json":        {orphan: model.OrphanLockNeverExpires, evidence: `not an RFC 3339 timestamp: "2026-07-24 06:10:00"`},
	"expiry-offset.json":             {evidence: "timestamp is not UTC with Z", contract: "canonical", freshness: "active"},
	"expiry-nan-string.json":         {orphan: model.OrphanLockNeverExpires, evidence: `not an RFC 3339 timestamp: "NaN"`},
	"expiry-blank.json":              {orphan: model.OrphanLockNeverExpires, evidence: "work_lease.expires_at"},
	"worktree-dotdot.json":           {evidence: "not followed", finding: "worktree ../../etc is outside"},
	"worktree-absolute-outside.json": {evidence: "not followed", finding: "worktree /etc is outside"},
	"ansi-osc-bidi-every-field.json": {orphan: model.OrphanLockNeverExpires, evidence: "decode.bad-timestamp"},
	"lease-id-path.json":             {contention: model.ContentionLockLeaseMismatch, evidence: "contract"},
	"legacy-claimant-only.json":      {orphan: model.OrphanLegacyLock, evidence: "top_level", contract: "legacy"},
	"session-99999.json":             {notLock: true},
}

// generated are the hostile entries that cannot live in the repository: each makes its
// entry in the locks directory dir (the real directory is its parent's "locks").
var generated = map[string]struct {
	make func(t *testing.T, dir string)
	want expect
}{
	"fifty-megabytes.json": {func(t *testing.T, dir string) {
		f, err := os.Create(filepath.Join(dir, "fifty-megabytes.json"))
		must(t, err)
		defer f.Close()
		must(t, f.Truncate(50<<20)) // sparse: 50 MB of NUL on disk costs nothing
	}, expect{orphan: model.OrphanUnreadableLock, evidence: "too-large"}},
	"x.json": {func(t *testing.T, dir string) { must(t, os.Mkdir(filepath.Join(dir, "x.json"), 0o700)) },
		expect{orphan: model.OrphanUnreadableLock, evidence: "not-regular: a directory"}},
	"fifo.json": {func(t *testing.T, dir string) { must(t, syscall.Mkfifo(filepath.Join(dir, "fifo.json"), 0o600)) },
		expect{orphan: model.OrphanUnreadableLock, evidence: "not-regular: a FIFO"}},
	"socket.json": {func(t *testing.T, dir string) {
		// A socket path must fit in 108 bytes: bind in a short temp dir and move it in.
		short, err := os.MkdirTemp("", "s")
		must(t, err)
		defer os.RemoveAll(short)
		l, err := net.Listen("unix", filepath.Join(short, "s"))
		must(t, err)
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close()
		must(t, os.Rename(filepath.Join(short, "s"), filepath.Join(dir, "socket.json")))
	}, expect{orphan: model.OrphanUnreadableLock, evidence: "not-regular: a socket"}},
	"passwd.json": {func(t *testing.T, dir string) { must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.json"))) },
		expect{orphan: model.OrphanUnreadableLock, evidence: "symlink-escapes"}},
	"loop-a.json": {func(t *testing.T, dir string) {
		must(t, os.Symlink("loop-b.json", filepath.Join(dir, "loop-a.json")))
		must(t, os.Symlink("loop-a.json", filepath.Join(dir, "loop-b.json")))
	}, expect{orphan: model.OrphanUnreadableLock, evidence: "symlink-loop"}},
	"dangling.json": {func(t *testing.T, dir string) { must(t, os.Symlink("gone.json", filepath.Join(dir, "dangling.json"))) },
		expect{orphan: model.OrphanUnreadableLock, evidence: "dangling-symlink"}},
	"dev-zero.json": {func(t *testing.T, dir string) { must(t, os.Symlink("/dev/zero", filepath.Join(dir, "dev-zero.json"))) },
		expect{orphan: model.OrphanUnreadableLock, evidence: "symlink-escapes"}},
	"huge-string-field.json": {func(t *testing.T, dir string) {
		rec := hostileRecord(t, "negative-generation.json")
		rec["lock_generation"] = 3
		rec["owner_session"] = strings.Repeat("x", 900_000)
		b, _ := json.Marshal(rec)
		writeFile(t, filepath.Join(dir, "huge-string-field.json"), b)
	}, expect{contract: "canonical", evidence: "contract"}},
	"\x1b[31mred\x1b]0;title\x07.json": {func(t *testing.T, dir string) {
		writeFile(t, filepath.Join(dir, "\x1b[31mred\x1b]0;title\x07.json"), []byte("{"))
	}, expect{orphan: model.OrphanUnreadableLock, evidence: "truncated-json"}},
}

// hostileRecord reads a committed hostile file as a JSON object.
func hostileRecord(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hostileDir, name))
	must(t, err)
	var m map[string]any
	must(t, json.Unmarshal(b, &m))
	return m
}

// TestHostileCatalogue puts each hostile lock file alone in a fresh workspace and runs
// `steward status --json` and `steward status` on it: no crash, no control sequence on
// the terminal, and the snapshot names the file and explains what is wrong with it.
func TestHostileCatalogue(t *testing.T) {
	t.Parallel()
	ents, err := os.ReadDir(hostileDir)
	must(t, err)
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		seen[name] = true
		want, ok := lockCases[name]
		if !ok {
			t.Errorf("%s has no expectation in lockCases", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			data, err := os.ReadFile(filepath.Join(hostileDir, name))
			must(t, err)
			writeFile(t, filepath.Join(w.ws.LocksDir, name), data)
			s, raw := w.status(t)
			checkCase(t, s, raw, name, want)
		})
	}
	for name := range lockCases {
		if !seen[name] {
			t.Errorf("lockCases names %s, which is not in %s", name, hostileDir)
		}
	}
	for name, g := range generated {
		t.Run(strings.ToValidUTF8(strings.ReplaceAll(name, "\x1b", "ESC"), "?"), func(t *testing.T) {
			t.Parallel()
			w := newWorkspace(t)
			g.make(t, w.ws.LocksDir)
			s, raw := w.status(t)
			checkCase(t, s, raw, name, g.want)
		})
	}
}

// TestHostileAllAtOnce puts every hostile file, committed and generated, into one locks
// directory: the read completes, the locks source is ok, and every file is still named.
func TestHostileAllAtOnce(t *testing.T) {
	t.Parallel()
	w := newWorkspace(t)
	ents, err := os.ReadDir(hostileDir)
	must(t, err)
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(hostileDir, e.Name()))
		must(t, err)
		writeFile(t, filepath.Join(w.ws.LocksDir, e.Name()), data)
	}
	for _, g := range generated {
		g.make(t, w.ws.LocksDir)
	}
	s, _ := w.status(t)
	if s.Sources.Locks.Status != model.StatusOK {
		t.Fatalf("locks source %s: %s", s.Sources.Locks.Status, s.Sources.Locks.Reason)
	}
	named := map[string]bool{}
	for _, c := range s.Claims {
		named[c.LockFile] = true
	}
	for _, o := range s.Orphans {
		named[o.LockFile] = true
	}
	var missing []string
	for name, want := range lockCases {
		if !want.notLock && !named[name] {
			missing = append(missing, name)
		}
	}
	for name := range generated {
		if !named[name] {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Fatalf("not named by any claim or orphan: %q", missing)
	}
}

// checkCase asserts one case's expectations on the snapshot of a workspace holding it.
func checkCase(t *testing.T, s *model.Snapshot, raw, name string, want expect) {
	t.Helper()
	var evs []model.Evidence
	var claims []*model.Claim
	var orphans []*model.Orphan
	for _, c := range s.Claims {
		if c.LockFile == name {
			claims = append(claims, c)
			evs = append(evs, c.Evidence...)
		}
	}
	for _, o := range s.Orphans {
		if o.LockFile == name {
			orphans = append(orphans, o)
			evs = append(evs, o.Evidence...)
		}
	}
	if s.Sources.Locks.Status != model.StatusOK {
		t.Errorf("locks source %s (%s): one bad file must not make the directory unreadable", s.Sources.Locks.Status, s.Sources.Locks.Reason)
	}
	if want.notLock {
		if len(claims)+len(orphans) > 0 {
			t.Errorf("%s is not a lock, but %d claims and %d orphans name it", name, len(claims), len(orphans))
		}
		return
	}
	if len(claims)+len(orphans) == 0 {
		t.Fatalf("no claim or orphan names %q: dropped silently\n%s", name, raw)
	}
	if want.orphan != "" {
		found := false
		for _, o := range orphans {
			if o.Kind == want.orphan {
				found = true
				if o.Action == nil && o.InspectOnlyReason == "" {
					t.Errorf("orphan %s of %s has neither an action nor an inspect-only reason", o.Kind, name)
				}
			}
		}
		if !found {
			t.Errorf("no %s orphan names %s\n%s", want.orphan, name, raw)
		}
	}
	if want.evidence != "" {
		found := false
		for _, e := range evs {
			if strings.Contains(e.Value, want.evidence) || strings.Contains(e.Field, want.evidence) {
				found = true
			}
		}
		if !found {
			t.Errorf("no evidence about %s contains %q: %+v", name, want.evidence, evs)
		}
	}
	if want.contention != "" {
		found := false
		for _, c := range s.Contention {
			for _, f := range c.LockFiles {
				found = found || (c.Kind == want.contention && f == name)
			}
		}
		if !found {
			t.Errorf("no %s contention names %s", want.contention, name)
		}
	}
	if want.finding != "" && !containsAny(s.Findings, want.finding) {
		t.Errorf("no finding contains %q: %q", want.finding, s.Findings)
	}
	for _, c := range claims {
		if want.contract != "" && c.Contract != want.contract {
			t.Errorf("claim contract %q, want %q", c.Contract, want.contract)
		}
		if want.freshness != "" && c.Freshness != want.freshness {
			t.Errorf("claim freshness %q, want %q", c.Freshness, want.freshness)
		}
		if want.owner != "" && c.OwnerLiveness != want.owner {
			t.Errorf("claim owner %q, want %q", c.OwnerLiveness, want.owner)
		}
	}
	if (want.contract != "" || want.freshness != "" || want.owner != "") && len(claims) == 0 {
		t.Errorf("no claim names %s", name)
	}
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
