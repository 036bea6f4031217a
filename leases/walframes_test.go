package leases

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestWALFramesPageSizes: a -wal whose header gives a page size SQLite allows — a power of
// two from 512 to 65,536, the largest written as 1 — and whose first frame checks out is
// one SQLite replays; a page size outside those bounds or not a power of two makes the
// -wal one SQLite ignores. (A reader that took the -wal for ignorable would read the main
// file alone and miss the commits in it.)
func TestWALFramesPageSizes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field, page uint32 // the header's page-size field, and the page size of the frame
		replays     bool
	}{
		{512, 512, true},
		{1024, 1024, true},
		{32768, 32768, true},
		{1, 65536, true},
		{65536, 65536, true},
		{256, 256, false},
		{131072, 131072, false},
		{1000, 1000, false},
	} {
		t.Run(fmt.Sprint(c.field), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "db-wal")
			if err := os.WriteFile(path, walWith(c.field, c.page), 0o600); err != nil {
				t.Fatal(err)
			}
			got, sig, err := walFrames(path)
			if err != nil || !sig.ok {
				t.Fatalf("walFrames: %v (sig %+v)", err, sig)
			}
			if got != c.replays {
				t.Fatalf("page size field %d: replays %v, want %v", c.field, got, c.replays)
			}
		})
	}
}

// walWith is a -wal of one frame of a page of page bytes, its header's page-size field
// field, big-endian checksums, the checksums computed as SQLite does (walChecksum).
func walWith(field, page uint32) []byte {
	h := make([]byte, 32)
	binary.BigEndian.PutUint32(h[0:], 0x377f0683) // big-endian checksums
	binary.BigEndian.PutUint32(h[4:], 3007000)
	binary.BigEndian.PutUint32(h[8:], field)
	binary.BigEndian.PutUint32(h[16:], 0x11223344) // salts
	binary.BigEndian.PutUint32(h[20:], 0x55667788)
	s1, s2 := walChecksum(h[:24], true, 0, 0)
	binary.BigEndian.PutUint32(h[24:], s1)
	binary.BigEndian.PutUint32(h[28:], s2)
	frame := make([]byte, 24+int(page))
	binary.BigEndian.PutUint32(frame[0:], 1) // page number
	binary.BigEndian.PutUint32(frame[4:], 1) // a commit: the database is 1 page
	copy(frame[8:16], h[16:24])
	for i := range frame[24:] {
		frame[24+i] = byte(i)
	}
	s1, s2 = walChecksum(frame[:8], true, s1, s2)
	s1, s2 = walChecksum(frame[24:], true, s1, s2)
	binary.BigEndian.PutUint32(frame[16:], s1)
	binary.BigEndian.PutUint32(frame[20:], s2)
	return append(h, frame...)
}
