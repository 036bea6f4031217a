// Package watchdir owns steward's one directory watcher: it reports, on a
// channel, batches of the names in one directory that were created, written,
// renamed, removed or had their mode changed, for the lock directory (locks)
// and the control-plane DB's directory (leases).
//
// What it owns:
//
//   - the kernel watch (fsnotify: inotify on Linux, kqueue on the BSDs and
//     macOS) of one directory, with a debounce window that turns a burst of
//     events (temp file, write, rename, fsync) into one batch;
//   - the polling fallback when the kernel refuses a watch for want of
//     resources (WatchLimit: ENOSPC, EMFILE), and Mode, a sentence for the
//     user saying how the directory is watched when not by the kernel;
//   - the re-attach: when the directory itself is removed or moved away, or
//     the kernel watch ends under it, a resync is reported at once and the
//     watch is made again when the directory is back.
//
// What it must never do: read, open or write a file in the directory (the
// caller re-reads the names it is given, and a resync means "list again");
// import another steward package; end a watch for any reason but Close — a
// closed Changes channel means Close was called.
package watchdir
