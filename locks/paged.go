package locks

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"steward/locks/lockrec"
)

// Listing is the locks directory as LoadDir lists it, for a reader that reads its live lock
// files a page at a time (steward status --json at fleet scale): LoadDir's Snapshot.Live is
// the entries of Read over every index of Names, in that order, the missing ones left out.
type Listing struct {
	dir, real string
	// Names are the per-issue lock files, in LoadDir's order (by name).
	Names []string
	types []fs.FileMode
	// RetiredUnavailable is LoadDir's Snapshot.RetiredUnavailable.
	RetiredUnavailable *lockrec.Unreadable
}

// LoadListing lists dir as LoadDir does, reading no lock file. The error is LoadDir's when dir
// cannot be listed.
func LoadListing(dir string) (*Listing, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &PathError{Op: "load", Path: dir, Err: err}
	}
	l := &Listing{dir: dir, real: realDir(dir)}
	for _, de := range ents {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, "."):
		case name == retiredDir && de.IsDir():
			if f, err := os.Open(filepath.Join(dir, retiredDir)); err != nil {
				l.RetiredUnavailable = &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: err.Error()}
			} else {
				f.Close()
			}
		case !strings.HasSuffix(name, nameSuffix):
		case classify(name) == lockrec.ClassLive:
			l.Names, l.types = append(l.Names, name), append(l.types, de.Type())
		}
	}
	return l, nil
}

// NameKey is the item the name of file Names[i] gives by steward's naming convention
// (false when it gives none): a reader plans the file by it before reading it.
func (l *Listing) NameKey(i int) (lockrec.Key, bool) { return parseName(l.Names[i]) }

// Read reads the files Names[ix[0]], Names[ix[1]], … as LoadDir does (on up to GOMAXPROCS
// goroutines) and returns their entries in that order; a file gone since the listing is
// an entry with Missing set.
func (l *Listing) Read(ix []int) []lockrec.Entry {
	out := make([]lockrec.Entry, len(ix))
	parallel(len(ix), func(i int, bp *[]byte) {
		out[i] = readEntry(l.dir, l.real, l.Names[ix[i]], lockrec.ClassLive, l.types[ix[i]], true, bp)
	})
	return out
}

// NewView returns an empty view of the lock directory dir, to Add the entries of a read
// to one at a time (ViewOf takes them all at once).
func NewView(dir string) *IndexView { return newView(&Index{dir: dir}) }

// Add files entry e in v as ViewOf does.
func (v *IndexView) Add(e *lockrec.Entry) {
	if e.Class != lockrec.ClassLive || e.Missing || strings.HasPrefix(e.Name, ".") || strings.ContainsAny(e.Name, `/\`) {
		return
	}
	var ix indexed
	if e.Unreadable == nil && e.HasKey {
		ix.key, ix.hasKey = e.Key.Identity(), true
	}
	v.add(e.Name, ix)
}
