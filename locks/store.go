package locks

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"steward/locks/lockrec"
)

// retiredDir is the subdirectory of archived locks.
const retiredDir = "retired"

// defaultLegacyFile is the supervised system's legacy single-slot lock file.
const defaultLegacyFile = "/tmp/gitea_issue_lock.json"

// legacyFileFromEnv returns $GITEA_ISSUE_LOCK_FILE, or defaultLegacyFile.
func legacyFileFromEnv() string { return LegacyFileFrom(os.LookupEnv) }

// LegacyFileFrom returns the GITEA_ISSUE_LOCK_FILE that lookup finds, or defaultLegacyFile
// (the seed's ISSUE_LOCK_FILE, issue_lock_provenance.py).
func LegacyFileFrom(lookup func(string) (string, bool)) string {
	if p, _ := lookup("GITEA_ISSUE_LOCK_FILE"); p != "" {
		return p
	}
	return defaultLegacyFile
}

// LoadOptions tunes LoadDir.
type LoadOptions struct {
	// LegacyFile is the legacy single-slot file to read when present ("" =
	// none). It may live outside the directory; a symlink there is refused.
	LegacyFile string
	// Retired reads every archived lock under retired/ into Snapshot.Retired. It costs
	// what the history holds (every release and retire leaves a file), so a reader of the
	// current state leaves it off: retired/ is then only checked to be a directory it can
	// open (RetiredUnavailable otherwise).
	Retired bool
}

// LoadDir reads every file of the locks directory dir once: per-issue lock
// files, session pointers, retired/ and, when configured and present, the
// legacy slot. A file that vanishes between the listing and the read (an
// archive or release in flight) is left out. The error is non-nil only when
// dir itself cannot be listed; every per-file problem is in its Entry.
func LoadDir(dir string, opts LoadOptions) (*lockrec.Snapshot, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, &PathError{Op: "load", Path: dir, Err: err}
	}
	s := &lockrec.Snapshot{Dir: dir, Live: make([]lockrec.Entry, 0, len(ents))}
	real := realDir(dir)
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	// The lock files and pointers are read on every core (ReadListed), then kept in
	// listing order.
	type file struct {
		name  string
		class lockrec.Class
		typ   fs.FileMode
	}
	var files []file
	for _, de := range ents {
		name := de.Name()
		switch {
		case strings.HasPrefix(name, "."):
			s.Ignored = append(s.Ignored, name)
		case name == retiredDir && de.IsDir() && opts.Retired:
			loadRetired(s, dir, real, bp)
		case name == retiredDir && de.IsDir():
			if f, err := os.Open(filepath.Join(dir, retiredDir)); err != nil {
				s.RetiredUnavailable = &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: err.Error()}
			} else {
				f.Close()
			}
		case !strings.HasSuffix(name, nameSuffix):
			s.Ignored = append(s.Ignored, name)
		default:
			files = append(files, file{name, classify(name), de.Type()})
		}
	}
	read := make([]lockrec.Entry, len(files))
	parallel(len(files), func(i int, bp *[]byte) {
		read[i] = readEntry(dir, real, files[i].name, files[i].class, files[i].typ, true, bp)
	})
	for i, e := range read {
		switch {
		case e.Missing:
		case files[i].class == lockrec.ClassPointer:
			s.Pointers = append(s.Pointers, e)
		default:
			s.Live = append(s.Live, e)
		}
	}
	if opts.LegacyFile != "" {
		s.Legacy = readLegacy(opts.LegacyFile, bp)
	}
	return s, nil
}

func loadRetired(s *lockrec.Snapshot, dir, real string, bp *[]byte) {
	rdir := filepath.Join(dir, retiredDir)
	ents, err := os.ReadDir(rdir)
	if err != nil {
		s.RetiredUnavailable = &lockrec.Unreadable{Reason: lockrec.UnreadableIO, Detail: err.Error()}
		return
	}
	for _, de := range ents {
		name := de.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, nameSuffix) {
			continue
		}
		e := readEntry(dir, real, retiredDir+"/"+name, lockrec.ClassRetired, de.Type(), true, bp)
		if !e.Missing {
			s.Retired = append(s.Retired, e)
		}
	}
	sort.Slice(s.Retired, func(i, j int) bool { return s.Retired[i].Name < s.Retired[j].Name })
}

// ReadLegacy reads the legacy single-slot lock file at path (it may live outside any locks
// directory): nil when it does not exist; a symlink is refused.
func ReadLegacy(path string) *lockrec.Entry {
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	return readLegacy(path, bp)
}

// readLegacy reads the legacy slot; nil when it does not exist. A symlink is
// refused: the slot lives in a world-writable directory.
func readLegacy(path string, bp *[]byte) *lockrec.Entry {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	e := lockrec.Entry{Name: filepath.Base(path), Path: path, Class: lockrec.ClassLegacy}
	switch {
	case err != nil:
		setErr(&e, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		e.Unreadable = &lockrec.Unreadable{
			Reason: lockrec.UnreadableSymlink,
			Detail: "the legacy slot is a symlink; not followed",
		}
	default:
		e = readEntry(
			filepath.Dir(path),
			filepath.Dir(path),
			filepath.Base(path),
			lockrec.ClassLegacy,
			fi.Mode().Type(),
			true,
			bp,
		)
		if e.Missing {
			return nil
		}
	}
	return &e
}
