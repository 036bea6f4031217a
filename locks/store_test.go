package locks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"steward/locks/lockrec"
)

func TestLoadDirKeyedByIdentity(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	canon := fixtureBytes(t, "canonical.json")
	// Two files, different names, same record identity: both kept.
	writeFile(t, filepath.Join(dir, "a.json"), canon)
	writeFile(t, filepath.Join(dir, "zz-other-name.json"), canon)
	writeFile(t, filepath.Join(dir, "legacy.json"), fixtureBytes(t, "legacy-top-level-claimant.json"))
	writeFile(t, filepath.Join(dir, "broken.json"), []byte("{"))
	writeFile(t, filepath.Join(dir, "session-4242.json"), fixtureBytes(t, "session-4242.json"))
	writeFile(t, filepath.Join(dir, "session-77.json"), canon) // a pointer holding a record copy
	writeFile(t, filepath.Join(dir, ".tmp-a.json-123"), []byte("{\"remote\":"))
	writeFile(t, filepath.Join(dir, ".a.json.flock"), nil)
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("x"))
	if err := os.Mkdir(filepath.Join(dir, "retired"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "retired", "a.20260724T060000Z.3.json"), canon)
	slot := filepath.Join(t.TempDir(), "gitea_issue_lock.json")
	writeFile(t, slot, fixtureBytes(t, "legacy-top-level-claimant.json"))

	s, err := LoadDir(dir, LoadOptions{LegacyFile: slot, Retired: true})
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []lockrec.Entry) string {
		var n []string
		for _, e := range es {
			n = append(n, e.Name)
		}
		return strings.Join(n, ",")
	}
	if got := names(s.Live); got != "a.json,broken.json,legacy.json,zz-other-name.json" {
		t.Errorf("live = %s", got)
	}
	if got := names(s.Pointers); got != "session-4242.json,session-77.json" {
		t.Errorf("pointers = %s", got)
	}
	if got := names(s.Retired); got != "retired/a.20260724T060000Z.3.json" || s.Retired[0].Class != lockrec.ClassRetired {
		t.Errorf("retired = %s", got)
	}
	// Without Retired, the history is not read, only checked to be readable.
	if cur, err := LoadDir(dir, LoadOptions{}); err != nil || len(cur.Retired) != 0 || cur.RetiredUnavailable != nil || len(cur.Live) != len(s.Live) {
		t.Errorf("current state only: %v retired %d unavailable %+v", err, len(cur.Retired), cur.RetiredUnavailable)
	}
	if got := strings.Join(s.Ignored, ","); got != ".a.json.flock,.tmp-a.json-123,notes.txt" {
		t.Errorf("ignored = %s", got)
	}
	if s.Legacy == nil || s.Legacy.Class != lockrec.ClassLegacy || lockrec.Assess(&s.Legacy.Record, fixtureNow).Contract != lockrec.ContractLegacy {
		t.Errorf("legacy slot = %+v", s.Legacy)
	}
	if p := s.Pointers[0].Pointer; p == nil || p.PID != 4242 || !strings.HasSuffix(p.Target, "issue-658.json") {
		t.Errorf("pointer = %+v", p)
	}
	if p := s.Pointers[1]; p.Pointer.PID != 77 || !p.HasKey {
		t.Errorf("record-copy pointer = %+v", p.Pointer)
	}
	key := lockrec.Key{Remote: "prgs", Org: "Scaled-Tech-Consulting", Repo: "Gitea-Tools", Issue: 658}
	by := s.ByKey()
	if len(by[key.Identity()]) != 2 {
		t.Errorf("key %v has %d entries, want 2 (duplicate-live-lock)", key, len(by[key.Identity()]))
	}
	if len(by) != 2 {
		t.Errorf("%d keys, want 2 (the unreadable file has none)", len(by))
	}

	// Missing legacy slot: nil, not an entry.
	s, err = LoadDir(dir, LoadOptions{LegacyFile: filepath.Join(t.TempDir(), "none.json")})
	if err != nil || s.Legacy != nil {
		t.Errorf("absent legacy slot: %v %+v", err, s.Legacy)
	}
	// A symlinked legacy slot is refused.
	link := filepath.Join(t.TempDir(), "slot.json")
	if err := os.Symlink(slot, link); err != nil {
		t.Fatal(err)
	}
	if s, _ = LoadDir(dir, LoadOptions{LegacyFile: link}); s.Legacy == nil || s.Legacy.Unreadable == nil || s.Legacy.Unreadable.Reason != lockrec.UnreadableSymlink {
		t.Errorf("symlinked slot: %+v", s.Legacy)
	}
	if _, err := LoadDir(filepath.Join(dir, "nope"), LoadOptions{}); err == nil {
		t.Error("missing dir loaded without error")
	}
}

func TestLegacyFileFromEnv(t *testing.T) {
	t.Setenv("GITEA_ISSUE_LOCK_FILE", "")
	if legacyFileFromEnv() != defaultLegacyFile {
		t.Error("default")
	}
	t.Setenv("GITEA_ISSUE_LOCK_FILE", "/x/y.json")
	if legacyFileFromEnv() != "/x/y.json" {
		t.Error("env override")
	}
}

func TestNameRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		key  lockrec.Key
		want string
	}{
		{lockrec.Key{Remote: "prgs", Org: "Scaled-Tech-Consulting", Repo: "Gitea-Tools", Issue: 658}, "prgs__Scaled-Tech-Consulting__Gitea-Tools__issue-658.json"},
		{lockrec.Key{Remote: "origin", Org: "my_org", Repo: "a.b", Issue: 1}, "origin__my%5Forg__a.b__issue-1.json"},
		{lockrec.Key{Remote: "..", Org: "../x", Repo: "a/b", Issue: 2}, "%2E.__%2E.%2Fx__a%2Fb__issue-2.json"},
		{lockrec.Key{Remote: "", Org: "", Repo: "", Issue: 0}, "______issue-0.json"},
		{lockrec.Key{Remote: "r\n", Org: "é", Repo: "__", Issue: 3}, "r%0A__%C3%A9__%5F%5F__issue-3.json"},
		// The ends of the plain ranges stay plain; the bytes just outside them are escaped.
		{lockrec.Key{Remote: "azAZ09", Org: "za", Repo: "ZA90", Issue: 4}, "azAZ09__za__ZA90__issue-4.json"},
		{lockrec.Key{Remote: "`{", Org: "@[", Repo: "/:", Issue: 5}, "%60%7B__%40%5B__%2F%3A__issue-5.json"},
	}
	for _, c := range cases {
		got, ok := Name(c.key)
		if !ok || got != c.want {
			t.Errorf("Name(%+v) = %q, want %q", c.key, got, c.want)
			continue
		}
		if !ValidName(got) || strings.Contains(got, "/") {
			t.Errorf("%q not a valid name", got)
		}
		back, ok := parseName(got)
		if !ok || back != c.key {
			t.Errorf("ParseName(%q) = %+v %v", got, back, ok)
		}
	}
	for _, bad := range []string{"x.json", "a__b__c__issue-01.json", "a__b__c__issue--1.json", "a__b__c__d__issue-1.json",
		"a__b__c__issue-1", "a_b__c__d__issue-1.json", "a%2__b__c__issue-1.json", "a%ff__b__c__issue-1.json"} {
		if k, ok := parseName(bad); ok {
			t.Errorf("ParseName(%q) accepted: %+v", bad, k)
		}
	}
	if _, ok := Name(lockrec.Key{Issue: -1}); ok {
		t.Error("negative issue named")
	}
	if _, ok := Name(lockrec.Key{Remote: strings.Repeat("a", 300)}); ok {
		t.Error("over-long name accepted")
	}
	// The limit is the file system's 255 bytes exactly: 20 bytes besides the remote
	// ("__o__r__issue-1.json").
	if n, ok := Name(lockrec.Key{Remote: strings.Repeat("a", 235), Org: "o", Repo: "r", Issue: 1}); !ok || len(n) != 255 || !ValidName(n) {
		t.Errorf("a name of 255 bytes refused: %d %v", len(n), ok)
	}
	if n, ok := Name(lockrec.Key{Remote: strings.Repeat("a", 236), Org: "o", Repo: "r", Issue: 1}); ok {
		t.Errorf("a name of %d bytes accepted", len(n))
	}
	if !ValidName("a b.json") || !ValidName("a~.json") {
		t.Error("a space or a tilde refused") // printable: only control bytes are refused
	}
	for _, bad := range []string{"", ".json", ".hidden.json", "a/b.json", "..", "a\x01.json", "a\x1f.json", "a\x7f.json", "a.txt", `a\b.json`} {
		if ValidName(bad) {
			t.Errorf("ValidName(%q) = true", bad)
		}
	}
}
