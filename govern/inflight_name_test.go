package govern

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"steward/govern/actionid"
	"steward/model"
)

// TestInflightPathTakesOnlyAttemptIDs: the in-flight marker of an attempt is a file named
// by the attempt id under <audit log>.inflight/ — only an id of letters, digits, '-', '_'
// and '.', not starting with '.', and at most 128 bytes long names one; anything else (a
// path, a dot file, a space, a longer id) names none, so a damaged or hostile record can
// never make steward lock a file outside that directory.
func TestInflightPathTakesOnlyAttemptIDs(t *testing.T) {
	l := &AuditLog{path: filepath.Join(t.TempDir(), "audit.jsonl")}
	for _, c := range []struct {
		id string
		ok bool
	}{
		{"att-01HZX_a.b", true},
		{"azAZ09-_.", true},
		{"a", true}, {"z", true}, {"A", true}, {"Z", true}, {"0", true}, {"9", true},
		{"x-", true}, {"x_", true}, {"x.", true},
		{strings.Repeat("a", 128), true},
		{strings.Repeat("a", 129), false},
		{"", false},
		{".hidden", false},
		{"a/b", false}, {"../x", false}, {"a b", false}, {"a\x00", false},
		{"`", false}, {"{", false}, {"@", false}, {"[", false}, {"/", false}, {":", false},
		{"x`", false}, {"x{", false}, {"x@", false}, {"x[", false}, {"x:", false}, {"x+", false}, {"x,", false},
		{"x^", false}, {"x/", false}, {"é", false},
	} {
		p, ok := l.inflightPath(c.id)
		if ok != c.ok {
			t.Errorf("attempt %q: names a marker %v, want %v", c.id, ok, c.ok)
			continue
		}
		if ok && p != filepath.Join(l.path+".inflight", c.id) {
			t.Errorf("attempt %q: marker %s, want it under %s.inflight/", c.id, p, l.path)
		}
	}
}

// TestQuoteArgCutsPast80: a worker's value quoted in a refusal keeps 80 characters whole
// and is cut, marked with "…" (quoted as \u2026), from the 81st.
func TestQuoteArgCutsPast80(t *testing.T) {
	if got := quoteArg(strings.Repeat("x", 80)); strings.Contains(got, `\u2026`) || strings.Count(got, "x") != 80 {
		t.Errorf("80 characters quoted as %q, want them whole", got)
	}
	if got := quoteArg(strings.Repeat("x", 81)); !strings.Contains(got, `\u2026`) || strings.Count(got, "x") != 80 {
		t.Errorf("81 characters quoted as %q, want 80 and a mark", got)
	}
}

// TestClipTargetCutsOnARuneBoundary: a target field over its limit is recorded cut to the
// limit, at the start of a rune — never inside one, so the record stays valid UTF-8 — and a
// field of bytes that start no rune at all is cut to nothing rather than read past its
// start.
func TestClipTargetCutsOnARuneBoundary(t *testing.T) {
	l, ok := LimitOf("target.session")
	if !ok {
		t.Fatal("no limit for target.session")
	}
	// "é" is 2 bytes: a leading "x" puts the limit inside one.
	long := "x" + strings.Repeat("é", l.Max)
	got := clipTarget(Target{Session: long}).Session
	if !utf8.ValidString(got) || !strings.HasSuffix(got, "…") || len(got) > l.Max+len("…") || len(got) < l.Max-1 {
		t.Errorf("clipped to %d bytes, valid %v: %q", len(got), utf8.ValidString(got), got)
	}
	cont := strings.Repeat("\x80", l.Max+10)
	if got := clipTarget(Target{Session: cont}).Session; got != "…" {
		t.Errorf("a field of continuation bytes clipped to %q, want only the mark", got)
	}
	if got := clipTarget(Target{Session: "short"}).Session; got != "short" {
		t.Errorf("a short field clipped to %q", got)
	}
}

// TestParamlessActionsRefuseParameters: an action that takes no parameters refuses any
// parameter given a value, naming it, and ignores names given empty.
func TestParamlessActionsRefuseParameters(t *testing.T) {
	if _, err := DecodeParams(actionid.RetireLock, map[string]string{"force": "yes"}); err == nil ||
		!strings.Contains(err.Error(), "force") {
		t.Errorf("a parameter given to lock.retire: %v, want it refused by name", err)
	}
	if _, err := DecodeParams(actionid.RetireLock, map[string]string{"force": ""}); err != nil {
		t.Errorf("an empty parameter given to lock.retire: %v, want none", err)
	}
}

// TestRedactorHoldsSecrets: a redactor holds secrets once a secret (or a scrubber) is
// added, and none before — `steward status --json` streams only without any.
func TestRedactorHoldsSecrets(t *testing.T) {
	r := NewRedactor()
	if r.HoldsSecrets() {
		t.Fatal("an empty redactor holds secrets")
	}
	r.Add("s3cret-token-value")
	if !r.HoldsSecrets() {
		t.Fatal("a redactor with a secret holds none")
	}
	s := NewRedactor()
	s.AddScrubber(func(v string) string { return strings.ReplaceAll(v, "hidden", "[redacted]") })
	if !s.HoldsSecrets() {
		t.Fatal("a redactor with a scrubber alone holds none")
	}
}

// TestRedactorSnapshotCopiesOnlyWhatHoldsASecret: a snapshot that holds no secret is
// returned as it is (published snapshots are shared: the common case costs no copy), one
// that holds a secret comes back as a redacted copy, the original unchanged.
func TestRedactorSnapshotCopiesOnlyWhatHoldsASecret(t *testing.T) {
	r := NewRedactor()
	r.Add("s3cret-token-value")
	clean := &model.Snapshot{Findings: []string{"nothing to hide"}}
	if got := r.Snapshot(clean); got != clean {
		t.Error("a snapshot without a secret was copied")
	}
	leaky := &model.Snapshot{Findings: []string{"token s3cret-token-value leaked"}}
	got := r.Snapshot(leaky)
	if got == leaky || strings.Contains(strings.Join(got.Findings, " "), "s3cret-token-value") ||
		leaky.Findings[0] != "token s3cret-token-value leaked" {
		t.Errorf("a snapshot with a secret: %q (original %q), want a redacted copy", got.Findings, leaky.Findings)
	}
}

// TestBranchesRootThroughALink: the directory every worktree must be inside is the
// repository root's branches/ with the root's links resolved.
func TestBranchesRootThroughALink(t *testing.T) {
	real := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "repo-link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	if got := (&Core{ws: Workspace{RepoRoot: link}}).branchesRoot(); got != filepath.Join(want, "branches") {
		t.Errorf("branches root through a link: %s, want %s", got, filepath.Join(want, "branches"))
	}
}

// TestWorktreeRootsAsWrittenAndResolved: a worktree may be inside <repo-root>/branches as
// written or with the root's links resolved — one root when the two are the same, both when
// the root is a link, none without a root.
func TestWorktreeRootsAsWrittenAndResolved(t *testing.T) {
	real := filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(real, 0o700); err != nil {
		t.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "repo-link")
	if err := os.Symlink(resolved, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		root string
		want []string
	}{
		{resolved, []string{filepath.Join(resolved, "branches")}},
		{link, []string{filepath.Join(link, "branches"), filepath.Join(resolved, "branches")}},
		{"", nil},
	} {
		got := (&Core{ws: Workspace{RepoRoot: c.root}}).worktreeRoots()
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("roots of %q: %v, want %v", c.root, got, c.want)
		}
	}
}

// TestRoleNamesRoundTrip: every role is named and read back by its name; a value outside
// the roles is named "none", never another role; an unknown name is an error.
func TestRoleNamesRoundTrip(t *testing.T) {
	for _, r := range []Role{RoleNone, RoleViewer, RoleOperator, RoleController, RoleAdmin} {
		b, err := r.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var back Role
		if err := back.UnmarshalText(b); err != nil || back != r {
			t.Errorf("role %d named %q read back as %d (%v)", r, b, back, err)
		}
	}
	for _, r := range []Role{-1, RoleAdmin + 1, 99} {
		if got := r.String(); got != "none" {
			t.Errorf("role %d named %q, want none", r, got)
		}
	}
	var r Role
	if err := r.UnmarshalText([]byte("superuser")); err == nil {
		t.Error("an unknown role name read without an error")
	}
}

// TestCapKeeps800Characters: a message of 800 characters is kept whole; one of 801 is cut
// to 800 ending with an ellipsis.
func TestCapKeeps800Characters(t *testing.T) {
	if s := strings.Repeat("é", 800); Cap(s) != s {
		t.Error("800 characters were cut")
	}
	got := Cap(strings.Repeat("é", 801))
	if n := utf8.RuneCountInString(got); n > 800 || !strings.HasSuffix(got, "…") {
		t.Errorf("801 characters capped to %d, ending %q", n, got[len(got)-4:])
	}
}

// TestCoreOnTheHostsClockMeasuresItsJumps: a core built without a test clock judges time
// by this host's and measures how far it moved against the monotonic clock: no jump right
// after it started, and a jump of an hour when the elapsed time it is given (Options.Elapsed)
// says an hour less passed than the host's clock shows.
func TestCoreOnTheHostsClockMeasuresItsJumps(t *testing.T) {
	f := newFixture(t, RoleOperator)
	c := New(f.ws, f.audit, Options{Actor: f.core.actor})
	defer c.Close()
	if jump, _ := c.clockJump(); jump > time.Second || jump < -time.Second {
		t.Errorf("a jump of %v right after the start", jump)
	}
	j := New(f.ws, f.audit, Options{Actor: f.core.actor, Elapsed: func() time.Duration { return -time.Hour }})
	defer j.Close()
	if jump, _ := j.clockJump(); jump < time.Hour-time.Minute {
		t.Errorf("a jump of %v, want the hour the monotonic clock did not see", jump)
	}
}

// TestResolveByHumanTakesOnlyAVerdict: a person's resolution of an unknown attempt is
// succeeded or failed; unknown (or any other word) is refused before anything is read or
// written.
func TestResolveByHumanTakesOnlyAVerdict(t *testing.T) {
	f := newFixture(t, RoleOperator)
	for _, r := range []Result{ResultUnknown, ResultRefused, "maybe"} {
		if err := f.core.ResolveByHuman("att-none", r, "a note"); err == nil ||
			!strings.Contains(err.Error(), "succeeded or failed") {
			t.Errorf("resolved as %q: %v, want it refused", r, err)
		}
	}
	if recs := f.records(); len(recs) != 0 {
		t.Errorf("the refused resolutions wrote %d records", len(recs))
	}
}

// TestParamRefusalsNameTheFirstByName: a request with several bad parameters is refused
// naming the first of them by name, whatever order they came in — the same refusal every
// time.
func TestParamRefusalsNameTheFirstByName(t *testing.T) {
	r := checkParams(Request{Action: actionid.Claim, Params: unknownParams{"zzz": "1", "aaa": "1", "mmm": "1"}})
	if r == nil || !strings.Contains(r.Message, `"aaa"`) {
		t.Errorf("unknown parameters refused as %+v, want aaa named", r)
	}
	over := strings.Repeat("x", 300)
	r = checkArgs(Request{Action: actionid.Claim, Target: Target{Item: item(7), Session: "s1"},
		Params: ClaimParams{Username: over, Role: over, Profile: over}})
	if r == nil || !strings.Contains(r.Message, "profile") {
		t.Errorf("three parameters over their limits refused as %+v, want profile named", r)
	}
}
