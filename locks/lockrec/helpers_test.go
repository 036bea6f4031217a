package lockrec

import (
	"os"
	"path/filepath"
	"testing"
)

// fixtureDir holds one lock file per verdict, expiration state and malformed case (the
// golden test in package locks reads them through the directory reader).
const fixtureDir = "../../testdata/locks"

func fixtureBytes(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fatal reports whether any finding is fatal (the record could not be read at all).
func fatal(fs []Finding) bool {
	for _, f := range fs {
		if f.Fatal() {
			return true
		}
	}
	return false
}
