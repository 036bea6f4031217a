package locks

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ArchiveName returns the retired/ file name for the lock file name archived
// at generation gen at time stamp (UTC): "<base>.<20060102T150405Z>.<gen>.json"
// (Archive adds "-2", "-3", … to the stamp when that name is taken).
func ArchiveName(name string, stamp string, gen int64) string {
	base := strings.TrimSuffix(name, nameSuffix)
	return base + "." + stamp + "." + strconv.FormatInt(gen, 10) + nameSuffix
}

// Archive retires a lock with the zero Writer; see Writer.Archive.
func Archive(dir, name string, expect Expect, block RecoveryBlock) (string, error) {
	return (&Writer{}).Archive(dir, name, expect, block)
}

// Archive retires dir/name: under the same flock and fence as WriteCAS it
// writes the current record, unchanged except for the added steward_recovery
// block, to retired/<ArchiveName> (temp, fsync, rename, directory fsync), and
// only then removes the live file and fsyncs dir. A crash in between leaves
// both files, which LoadDir reports as live plus retired — never nothing.
// Archive fills block's ArchivedAt, LiveName, PriorGeneration and
// PriorTaskSessionID. It returns the archived name relative to dir
// ("retired/<file>").
func (w *Writer) Archive(dir, name string, expect Expect, block RecoveryBlock) (string, error) {
	path := filepath.Join(dir, name)
	if !ValidName(name) {
		return "", &PathError{Op: "archive", Path: path, Err: ErrInvalidName}
	}
	if expect.Absent {
		return "", &PathError{Op: "archive", Path: path, Err: errors.New("archive needs a fence on an existing lock, not ExpectAbsent")}
	}
	unlock, err := lockName(dir, name)
	if err != nil {
		return "", err
	}
	defer unlock()
	w.step(StepLocked)
	cur, err := current(dir, name, "archive")
	if err != nil {
		return "", err
	}
	if err := checkFence(cur, expect, "archive", path); err != nil {
		return "", err
	}
	now := w.now()
	block.ArchivedAt = FormatTime(now)
	block.LiveName = name
	block.PriorGeneration = cur.Record.Generation()
	block.PriorTaskSessionID = cur.Record.TaskSessionID()
	raw, err := json.Marshal(block)
	if err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	rec := cur.Record
	rec.StewardRecovery = raw
	data, err := Marshal(&rec)
	if err != nil {
		return "", err
	}
	rdir := filepath.Join(dir, retiredDir)
	if err := ensureDir(rdir); err != nil {
		return "", err
	}
	// One name per archive: a lock claimed and released twice within a second (a new lock
	// starts again at generation 1) gets "<stamp>-2", "-3", …. Archives of one live name
	// are serialised by its flock, held here.
	stamp := now.Format("20060102T150405Z")
	aname := ArchiveName(name, stamp, block.PriorGeneration)
	for n := 2; ; n++ {
		if _, err := os.Lstat(filepath.Join(rdir, aname)); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return "", &PathError{Op: "archive", Path: filepath.Join(rdir, aname), Err: err}
		} else if n > 1000 {
			return "", &PathError{Op: "archive", Path: filepath.Join(rdir, aname), Err: ErrExists}
		}
		aname = ArchiveName(name, stamp+"-"+strconv.Itoa(n), block.PriorGeneration)
	}
	if err := w.replace(rdir, aname, data); err != nil {
		return "", err
	}
	// The archive is durable; remove the live file only if it is still the
	// one we read (a cooperating writer cannot change it under the flock; a
	// foreign writer's rename would change the inode).
	fi, err := os.Lstat(path)
	if err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Ino) != cur.Inode {
		return retiredDir + "/" + aname, &PathError{Op: "archive", Path: path, Err: ErrFenceMoved}
	}
	if err := os.Remove(path); err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	w.step(StepLiveRemoved)
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return retiredDir + "/" + aname, nil
}

func ensureDir(d string) error {
	fi, err := os.Lstat(d)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return &PathError{Op: "mkdir", Path: d, Err: err}
		}
		return syncDir(filepath.Dir(d))
	}
	if err != nil {
		return &PathError{Op: "mkdir", Path: d, Err: err}
	}
	if !fi.IsDir() {
		return &PathError{Op: "mkdir", Path: d, Err: ErrNotRegular}
	}
	return nil
}

// Restore undoes an archive with the zero Writer; see Writer.Restore.
func Restore(dir, archivedName string) (string, int64, error) {
	return (&Writer{}).Restore(dir, archivedName)
}

// Restore puts an archived lock back: archivedName is what Archive returned
// ("retired/<file>", or the bare file name). It refuses with ErrExists when
// any live lock in dir now holds the same key (the item was claimed since)
// and writes the record back under its original name (steward_recovery
// removed, lock_generation advanced) with WriteCAS's ExpectAbsent fence. The
// archived file stays as history. It returns the live name and generation.
func (w *Writer) Restore(dir, archivedName string) (string, int64, error) {
	file := strings.TrimPrefix(archivedName, retiredDir+"/")
	apath := filepath.Join(dir, retiredDir, file)
	if !ValidName(file) {
		return "", 0, &PathError{Op: "restore", Path: apath, Err: ErrInvalidName}
	}
	e := ReadFile(dir, retiredDir+"/"+file)
	switch {
	case e.Missing:
		return "", 0, &PathError{Op: "restore", Path: apath, Err: ErrNotFound}
	case e.Unreadable != nil:
		return "", 0, &PathError{Op: "restore", Path: apath, Err: ErrUnreadable}
	case !e.HasKey:
		return "", 0, &PathError{Op: "restore", Path: apath, Err: errors.New("archived record has no issue_number")}
	}
	live := ""
	if b, ok := e.Record.Recovery(); ok && ValidName(b.LiveName) {
		live = b.LiveName
	} else if n, ok := Name(e.Key); ok {
		live = n
	} else {
		return "", 0, &PathError{Op: "restore", Path: apath, Err: ErrInvalidName}
	}
	claimedSince := func() error {
		snap, err := LoadDir(dir, LoadOptions{})
		if err != nil {
			return err
		}
		for _, other := range snap.Live {
			if other.HasKey && other.Key == e.Key {
				return &PathError{Op: "restore", Path: other.Path, Err: ErrExists}
			}
		}
		return nil
	}
	rec := e.Record
	rec.StewardRecovery = nil
	rec.Keys = slices.DeleteFunc(slices.Clone(rec.Keys), func(k string) bool { return k == "steward_recovery" })
	gen, err := w.writeCAS(dir, live, ExpectAbsent(), rec, e.Record.Generation()+1, claimedSince)
	if err != nil {
		return "", 0, err
	}
	return live, gen, nil
}
