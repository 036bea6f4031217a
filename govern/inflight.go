package govern

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// An apply holds its attempt "in flight" from before its intent is written until its
// outcome is: an exclusive flock on <audit log>.inflight/<attempt>. The kernel drops the
// lock when the process dies, so a verifier tells an attempt still being applied (by any
// process on this host) from one that was interrupted, without timing guesses: it settles
// only the interrupted ones. (flock does not reach across hosts: an audit log shared over
// a network file system is not supported.)

func (l *AuditLog) inflightPath(attempt string) (string, bool) {
	if attempt == "" || len(attempt) > 128 {
		return "", false
	}
	for _, r := range attempt {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') ||
			attempt[0] == '.' {
			return "", false
		}
	}
	return filepath.Join(l.path+".inflight", attempt), true
}

// hold marks attempt in flight until release is called (or the process dies).
func (l *AuditLog) hold(attempt string) (release func(), err error) {
	if l.readOnly {
		return nil, fmt.Errorf("%w: %w", errAuditUnavailable, errAuditReadOnly)
	}
	p, ok := l.inflightPath(attempt)
	if !ok {
		return nil, fmt.Errorf("%w: attempt id %q cannot name a file", errAuditUnavailable, attempt)
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return nil, fmt.Errorf("%w: %v", errAuditUnavailable, err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errAuditUnavailable, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: lock %s: %v", errAuditUnavailable, p, err)
	}
	return func() {
		os.Remove(p) // before the unlock: a verifier never finds it unlocked while the apply runs
		f.Close()
	}, nil
}

// inFlight reports whether attempt is being applied now by a live process on this host. A
// marker left by a process that died is removed.
func (l *AuditLog) inFlight(attempt string) bool {
	p, ok := l.inflightPath(attempt)
	if !ok {
		return false
	}
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false // absent: not held (or already released)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	if !l.readOnly {
		os.Remove(p) // its holder died: the marker is stale
	}
	return false
}
