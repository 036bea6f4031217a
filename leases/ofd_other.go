//go:build !linux

package leases

import (
	"errors"
	"os"
)

// ofdSupported is false where the kernel has no open-file-description locks: a
// process-associated lock taken here would merge with SQLite's own locks in this process
// (and be dropped by them), so none is taken and a quiescent read is checked by the
// file's size and modification time instead (see quiescentOK).
const ofdSupported = false

func readLock(*os.File) error   { return errors.ErrUnsupported }
func readUnlock(*os.File) error { return nil }
