package locks

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"steward/locks/lockrec"
)

// TestIndexFindsEveryLiveLockOfAnItem: the claim used to probe only
// steward's own file name for the item, so a live lock under another name (the contract
// allows any) or for ACME/Widgets instead of acme/widgets was not seen. The index finds
// them by the record's item identity; an unreadable file under the item's canonical name
// counts too, never as free.
func TestIndexFindsEveryLiveLockOfAnItem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	other := func(org, repo string, n int64) lockrec.Record {
		r := rec
		r.Org, r.Repo = org, repo
		r.IssueNumber = &n
		return r
	}
	write := func(name string, r lockrec.Record) {
		t.Helper()
		if _, err := WriteCAS(dir, name, ExpectAbsent(), r); err != nil {
			t.Fatal(err)
		}
	}
	write("worker-own-name.json", rec)                                         // the item, a foreign name
	write("upper.json", other(" "+upper(key.Org), upper(key.Repo), key.Issue)) // the item, other case
	write("elsewhere.json", other(key.Org, key.Repo, key.Issue+1))             // another issue
	canon, _ := Name(lockrec.Key{Remote: key.Remote, Org: upper(key.Org), Repo: key.Repo, Issue: key.Issue})
	writeFile(t, filepath.Join(dir, canon), []byte(`{"remote":`)) // torn, under a canonical name of the item
	writeFile(t, filepath.Join(dir, "torn-elsewhere.json"), []byte(`{"remote":`))
	x := NewIndex(dir)
	names := func() []string {
		t.Helper()
		es, err := x.Lookup(lockrec.Key{Remote: key.Remote, Org: upper(key.Org), Repo: key.Repo, Issue: key.Issue})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	want := []string{canon, "upper.json", "worker-own-name.json"}
	if got := names(); !equal(got, want) {
		t.Fatalf("lookup: %v, want %v", got, want)
	}
	// A file rewritten in place to name another item drops out; a removed one too; a new
	// one is found.
	if err := os.WriteFile(filepath.Join(dir, "upper.json"), mustMarshal(t, other(key.Org, key.Repo, 999)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, canon)); err != nil {
		t.Fatal(err)
	}
	write("late.json", other(key.Org, upper(key.Repo), key.Issue))
	if got, want := names(), []string{"late.json", "worker-own-name.json"}; !equal(got, want) {
		t.Fatalf("after changes: %v, want %v", got, want)
	}
	if _, err := NewIndex(filepath.Join(dir, "missing")).Lookup(key); err == nil {
		t.Error("a missing directory looked up as empty")
	}
}

// TestRestoreRefusesWhenReclaimedInOtherCase: a re-claim of the item spelled ACME/Widgets
// blocks the restore of acme/widgets' archived lock.
func TestRestoreRefusesWhenReclaimedInOtherCase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	name, _ := Name(key)
	if _, err := WriteCAS(dir, name, ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	cur := ReadFile(dir, name)
	archived, err := archive(dir, name, FenceOf(&cur.Record), lockrec.RecoveryBlock{Action: "retire_lock"})
	if err != nil {
		t.Fatal(err)
	}
	again := rec
	again.Org = upper(key.Org)
	if _, err := WriteCAS(dir, "reclaimed.json", ExpectAbsent(), again); err != nil {
		t.Fatal(err)
	}
	if _, _, err := restore(dir, archived); !errors.Is(err, ErrExists) {
		t.Fatalf("restore over a re-claim in another case: %v", err)
	}
}

func upper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 32
		}
	}
	return string(b)
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func mustMarshal(t *testing.T, r lockrec.Record) []byte {
	t.Helper()
	b, err := lockrec.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestIndexViewListsOnce: a view answers from the one refresh that made it — a lock file
// written since is not listed by it (it never lists the directory again), while the index
// itself finds it; a file the view knows is read fresh. A record naming no item under the
// item's canonical name counts for the item (never taken for free), in both.
func TestIndexViewListsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	canon, _ := Name(key)
	if _, err := WriteCAS(dir, "worker-own-name.json", ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, canon), []byte(`{"note":"no item named"}`))
	x := NewIndex(dir)
	v, err := x.View()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteCAS(dir, "late.json", ExpectAbsent(), rec); err != nil {
		t.Fatal(err)
	}
	names := func(es []lockrec.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	if got, want := names(v.Lookup(key)), []string{canon, "worker-own-name.json"}; !equal(got, want) {
		t.Fatalf("view: %v, want %v", got, want)
	}
	es, err := x.Lookup(key)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(es), []string{"late.json", canon, "worker-own-name.json"}; !equal(got, want) {
		t.Fatalf("index: %v, want %v", got, want)
	}
}

// TestIndexViewLookupIsPerItem: a view's lookup costs what the item's own files cost,
// whatever the size of the directory. It walked every name of the view (a parseName and an
// identity per file) for each lookup, so previewing every orphan of a fleet was
// O(orphans × files): steward status --json at 50,000 claims (500 orphans) parsed 25
// million file names. Measured by allocations, not time: a lookup in a directory of 2,000
// other items allocates what one in a directory of 20 does.
func TestIndexViewLookupIsPerItem(t *testing.T) {
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	allocs := func(others int) float64 {
		dir := t.TempDir()
		canon, _ := Name(key)
		if _, err := WriteCAS(dir, canon, ExpectAbsent(), rec); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= others; i++ {
			r, n := rec, key.Issue+int64(i)
			r.IssueNumber = &n
			name, _ := Name(lockrec.Key{Remote: key.Remote, Org: key.Org, Repo: key.Repo, Issue: n})
			if i%2 == 0 {
				name = fmt.Sprintf("worker-%d.json", i) // a foreign name: found by its record
			}
			writeFile(t, filepath.Join(dir, name), mustMarshal(t, r))
		}
		v, err := NewIndex(dir).View()
		if err != nil {
			t.Fatal(err)
		}
		var got []lockrec.Entry
		a := testing.AllocsPerRun(20, func() { got = v.Lookup(key) })
		if len(got) != 1 || got[0].Name != canon {
			t.Fatalf("lookup among %d others: %v, want only %s", others, got, canon)
		}
		return a
	}
	small, large := allocs(20), allocs(2000)
	if large > small+2 {
		t.Errorf("a lookup allocates %.0f times among 2,000 other items' files, %.0f among 20: it walks the whole directory", large, small)
	}
}

// TestViewOfListingIsView: the view a directory listing already read gives (ViewOf over
// LoadDir's Live, as steward status passes its previews) answers every lookup as a refresh
// of the index does — records naming the item under any name and in any case, a torn file
// and a record naming no item under the item's canonical name, and nothing of pointers,
// hidden files or other items.
func TestViewOfListingIsView(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := decodeFixture(t, "canonical.json")
	key, _ := rec.Key()
	item := func(n int64) lockrec.Key {
		return lockrec.Key{Remote: key.Remote, Org: key.Org, Repo: key.Repo, Issue: n}
	}
	at := func(n int64, org string) lockrec.Record {
		r := rec
		r.IssueNumber, r.Org = &n, org
		return r
	}
	name := func(k lockrec.Key) string { s, _ := Name(k); return s }
	writeFile(t, filepath.Join(dir, name(item(1))), mustMarshal(t, at(1, key.Org)))
	writeFile(t, filepath.Join(dir, "worker-own-name.json"), mustMarshal(t, at(1, upper(key.Org))))
	writeFile(t, filepath.Join(dir, name(item(2))), []byte(`{"remote":`))
	writeFile(t, filepath.Join(dir, name(item(3))), []byte(`{"note":"no item named"}`))
	writeFile(t, filepath.Join(dir, "elsewhere.json"), mustMarshal(t, at(4, key.Org)))
	writeFile(t, filepath.Join(dir, ".hidden.json"), mustMarshal(t, at(1, key.Org)))
	writeFile(t, filepath.Join(dir, "session-4242.json"), mustMarshal(t, at(1, key.Org)))
	snap, err := LoadDir(dir, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := ViewOf(dir, func(yield func(*lockrec.Entry) bool) {
		for i := range snap.Live {
			if !yield(&snap.Live[i]) {
				return
			}
		}
	})
	want, err := NewIndex(dir).View()
	if err != nil {
		t.Fatal(err)
	}
	names := func(es []lockrec.Entry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Name)
		}
		return out
	}
	for n := int64(1); n <= 5; n++ {
		g, w := names(got.Lookup(item(n))), names(want.Lookup(item(n)))
		if !equal(g, w) {
			t.Errorf("item %d: the listing's view finds %v, a refresh %v", n, g, w)
		}
	}
	if g := names(got.Lookup(item(1))); len(g) != 2 {
		t.Errorf("item 1: %v, want its two lock files", g)
	}
	if g := names(got.Lookup(item(2))); len(g) != 1 {
		t.Errorf("item 2: %v, want its torn file", g)
	}
}
