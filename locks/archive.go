package locks

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"steward/locks/lockrec"
)

// archiveName returns the retired/ file name for the lock file name archived
// at generation gen at time stamp (UTC): "<base>.<20060102T150405Z>.<gen>.json"
// (Archive adds "-2", "-3", … to the stamp when that name is taken).
func archiveName(name string, stamp string, gen int64) string {
	base := strings.TrimSuffix(name, nameSuffix)
	return base + "." + stamp + "." + strconv.FormatInt(gen, 10) + nameSuffix
}

// archive retires a lock with the zero Writer; see Writer.Archive.
func archive(dir, name string, expect Expect, block lockrec.RecoveryBlock) (string, error) {
	return (&Writer{}).Archive(dir, name, expect, block)
}

// Archive retires dir/name: under the same flock and fence as WriteCAS it
// writes the current record, unchanged except for the added steward_recovery
// block, to retired/<archiveName> (temp, fsync, rename, directory fsync), and
// only then removes the live file and fsyncs dir. A crash in between leaves
// both files, which LoadDir reports as live plus retired — never nothing.
// Archive fills block's ArchivedAt, LiveName, PriorGeneration and
// PriorTaskSessionID. It returns the archived name relative to dir
// ("retired/<file>").
//
// The supervised system's workers do not take steward's flock, and one may
// rewrite its lock in place (same inode) while Archive runs. Archive keeps
// the live file open from the moment it reads it and compares the content
// twice: through that descriptor right before the unlink (and the inode of
// the path), and again right after it. When the content moved, the worker's
// write wins: the live file is kept (or written back, from the descriptor,
// without replacing a file created meanwhile), the archive just written is
// removed, and Archive returns ErrFenceMoved. Should that archive not come
// off again, it stays in retired/ and Archive returns its name beside
// ErrFenceMoved and the removal's error (on every other error the name is
// empty). What remains: a writer that
// opened the file before the unlink and writes after the second comparison
// writes into the unlinked inode, and that write is lost — the window is the
// few instructions between the second read and the return, and only for
// in-place writers (a writer that replaces the file by rename changes the
// inode, which the first comparison catches).
func (w *Writer) Archive(dir, name string, expect Expect, block lockrec.RecoveryBlock) (string, error) {
	path := filepath.Join(dir, name)
	if !ValidName(name) {
		return "", &PathError{Op: "archive", Path: path, Err: ErrInvalidName}
	}
	if expect.Absent {
		return "", &PathError{
			Op:   "archive",
			Path: path,
			Err:  errors.New("archive needs a fence on an existing lock, not ExpectAbsent"),
		}
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
	// Keep the live file open: the content archived is what this descriptor reads, and it
	// is compared again before and after the unlink.
	lf, orig, err := openLive(path, cur.Inode)
	if err != nil {
		return "", err
	}
	defer lf.Close()
	if rec, finds := lockrec.Decode(orig); fatal(finds) || rec.Generation() != cur.Record.Generation() ||
		rec.TaskSessionID() != cur.Record.TaskSessionID() {
		return "", &PathError{Op: "archive", Path: path, Err: ErrFenceMoved}
	} else {
		cur.Record = rec
	}
	now := w.now()
	block.ArchivedAt = lockrec.FormatTime(now)
	block.LiveName = name
	block.PriorGeneration = cur.Record.Generation()
	block.PriorTaskSessionID = cur.Record.TaskSessionID()
	raw, err := json.Marshal(block)
	if err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	rec := cur.Record
	rec.StewardRecovery = raw
	data, err := lockrec.Marshal(&rec)
	if err != nil {
		return "", err
	}
	if err := readable(data); err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	rdir := filepath.Join(dir, retiredDir)
	if err := ensureDir(rdir); err != nil {
		return "", err
	}
	// One name per archive: a lock claimed and released twice within a second (a new lock
	// starts again at generation 1) gets "<stamp>-2", "-3", …. Archives of one live name
	// are serialised by its flock, held here.
	stamp := now.Format("20060102T150405Z")
	aname := archiveName(name, stamp, block.PriorGeneration)
	for n := 2; ; n++ {
		if _, err := os.Lstat(filepath.Join(rdir, aname)); errors.Is(err, fs.ErrNotExist) {
			break
		} else if err != nil {
			return "", &PathError{Op: "archive", Path: filepath.Join(rdir, aname), Err: err}
		} else if n > 1000 {
			return "", &PathError{Op: "archive", Path: filepath.Join(rdir, aname), Err: ErrExists}
		}
		aname = archiveName(name, stamp+"-"+strconv.Itoa(n), block.PriorGeneration)
	}
	if err := w.replace(rdir, aname, data); err != nil {
		return "", err
	}
	// The archive is durable; remove the live file only if it is still the one we read,
	// byte for byte (a cooperating writer cannot change it under the flock; a foreign
	// writer's rename changes the inode, its in-place rewrite the content).
	fi, err := os.Lstat(path)
	if err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && uint64(st.Ino) != cur.Inode {
		return w.moved(rdir, aname, path, "the live file was replaced while it was archived")
	}
	if again, err := readAt0(lf); err != nil || !bytes.Equal(again, orig) {
		return w.moved(rdir, aname, path, "the live file was rewritten in place while it was archived")
	}
	if err := os.Remove(path); err != nil {
		return "", &PathError{Op: "archive", Path: path, Err: err}
	}
	w.step(StepLiveRemoved)
	// A write that landed between the comparison and the unlink is in the inode still
	// open here: put it back under the live name, unless a new lock took the name.
	if after, err := readAt0(lf); err == nil && !bytes.Equal(after, orig) {
		if perr := w.putBack(dir, name, after); perr != nil {
			left, err := w.moved(rdir, aname, path, "the live file was rewritten in place while it was removed")
			return left, errors.Join(err, perr)
		}
		return w.moved(
			rdir,
			aname,
			path,
			"the live file was rewritten in place while it was removed; it was written back",
		)
	}
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return retiredDir + "/" + aname, nil
}

// moved removes the archive Archive just wrote (the live lock moved on; the archive would
// hold a generation that was never retired) and returns the fence error, with the
// archive's name when it could not be removed (it stays in retired/).
func (w *Writer) moved(rdir, aname, path, why string) (string, error) {
	err := &PathError{Op: "archive", Path: path, Err: fmt.Errorf("%w: %s", ErrFenceMoved, why)}
	if rerr := os.Remove(filepath.Join(rdir, aname)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
		left := &PathError{Op: "archive", Path: filepath.Join(rdir, aname), Err: rerr}
		return retiredDir + "/" + aname, errors.Join(err, left)
	}
	if serr := syncDir(rdir); serr != nil {
		return "", errors.Join(err, serr)
	}
	return "", err
}

// putBack writes data under dir/name without replacing a file that exists there now: a
// temp file, fsync, link to the name (fails when the name is taken), directory fsync.
func (w *Writer) putBack(dir, name string, data []byte) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, ".tmp-"+name+"-"+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return &PathError{Op: "write back", Path: tmp, Err: err}
	}
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return &PathError{Op: "write back", Path: tmp, Err: err}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return &PathError{Op: "write back", Path: tmp, Err: err}
	}
	if err := f.Close(); err != nil {
		return &PathError{Op: "write back", Path: tmp, Err: err}
	}
	if err := os.Link(tmp, filepath.Join(dir, name)); err != nil {
		return &PathError{Op: "write back", Path: filepath.Join(dir, name), Err: err}
	}
	return syncDir(dir)
}

// openLive opens the live lock at path for reading (never following a link, never
// blocking), checks it is the regular file with inode ino that was fenced, and reads it.
func openLive(path string, ino uint64) (*os.File, []byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &PathError{Op: "archive", Path: path, Err: ErrNotFound}
	}
	if err != nil {
		return nil, nil, &PathError{Op: "archive", Path: path, Err: err}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &PathError{Op: "archive", Path: path, Err: err}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.Mode().IsRegular() || (ok && uint64(st.Ino) != ino) {
		f.Close()
		return nil, nil, &PathError{Op: "archive", Path: path, Err: ErrFenceMoved}
	}
	data, err := readAt0(f)
	if err != nil {
		f.Close()
		return nil, nil, &PathError{Op: "archive", Path: path, Err: err}
	}
	return f, data, nil
}

// readAt0 reads f from offset 0 to its end (at most MaxFileSize+1 bytes).
func readAt0(f *os.File) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, MaxFileSize+1), MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxFileSize {
		return nil, errTooLarge
	}
	return b, nil
}

func fatal(fs []lockrec.Finding) bool {
	for _, f := range fs {
		if f.Fatal() {
			return true
		}
	}
	return false
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

// restore undoes an archive with the zero Writer; see Writer.Restore.
func restore(dir, archivedName string) (string, int64, error) {
	return (&Writer{}).Restore(dir, archivedName)
}

// Restore puts an archived lock back: archivedName is what Archive returned
// ("retired/<file>", or the bare file name). It refuses with ErrExists when
// any live lock in dir now holds the same key (the item was claimed since)
// (by Key.Identity, whatever its file name or the case of its org and repo)
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
			if other.HasKey && other.Unreadable == nil && lockrec.SameItem(other.Key, e.Key) {
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
