package locks

import (
	"errors"
	"testing"
)

func TestPathErrorText(t *testing.T) {
	t.Parallel()
	if got := (&PathError{Op: "write", Path: "/l/x.json", Err: ErrExists}).Error(); got != "locks: write /l/x.json: "+ErrExists.Error() {
		t.Errorf("with a path: %q", got)
	}
	err := &PathError{Op: "marshal", Err: errors.New("bad")}
	if got := err.Error(); got != "locks: marshal: bad" {
		t.Errorf("without a path: %q", got)
	}
}
