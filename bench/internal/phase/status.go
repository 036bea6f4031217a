package phase

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"steward/cli"
)

// statusOut is the file, in the workspace, that `steward status --json` writes its output
// to (as `steward status --json > file` does); the parent checks it after the child ends.
const statusOut = "status.json"

// statusArgs are the arguments of the measured command: the workspace's sources, no Gitea,
// classified at the fleet's instant.
func (c *Config) statusArgs() []string {
	m := c.Meta
	return []string{
		"status",
		"--json",
		"--no-gitea",
		"--locks",
		m.LocksDir,
		"--db",
		m.DBPath,
		"--repo-root",
		m.RepoRoot,
		"--audit",
		m.AuditPath,
		"--now",
		m.Base.UTC().Format(time.RFC3339),
	}
}

// StewardStatus runs `steward status --json` Cold times in this process, through cli.Main
// — the code the binary runs — each time writing its output to a fresh file, and times
// each from the call to its return (the output written and closed). No configuration file
// is read: XDG_CONFIG_HOME points at an empty directory for the child's life.
func StewardStatus(ctx context.Context, c *Config) (*Result, error) {
	r := newResult()
	home, err := os.MkdirTemp(filepath.Dir(c.Meta.LocksDir), "xdg-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	os.Setenv("XDG_CONFIG_HOME", home)
	os.Unsetenv("STEWARD_CONFIG")
	out := filepath.Join(filepath.Dir(c.Meta.LocksDir), statusOut)
	stop := c.profile("status")
	defer stop()
	err = c.coldRuns(func(int) error {
		f, err := os.Create(out)
		if err != nil {
			return err
		}
		var stderr bytes.Buffer
		t0 := time.Now()
		code := cli.Main(c.statusArgs(), f, &stderr)
		err = f.Close()
		d := time.Since(t0)
		if code != 0 {
			return fmt.Errorf("steward status --json exited %d: %s", code, bytes.TrimSpace(stderr.Bytes()))
		}
		if err != nil {
			return err
		}
		r.add(StatusJSON, d)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.heapProfile("status-heap")
	r.HWM = hwm()
	return r, nil
}

// LimitStatus is the physical limit of StewardStatus: the same lock files listed and read
// whole, and the same tables read by a bare SELECT *, no decode, nothing written.
func LimitStatus(ctx context.Context, c *Config) (*Result, error) {
	r := newResult()
	err := c.coldRuns(func(int) error {
		t0 := time.Now()
		files, _, err := rawFiles(c.Meta.LocksDir)
		if err != nil {
			return err
		}
		if _, err := bareRows(ctx, c.Meta.DBPath); err != nil {
			return err
		}
		r.add(StatusJSON, time.Since(t0))
		runtime.KeepAlive(files)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.HWM = hwm()
	return r, nil
}

// CountStatusClaims reads the output a StewardStatus child left in workspace dir as a
// stream of JSON tokens (never whole) and returns the number of elements of its top-level
// "claims" array, and its size in bytes. It fails when the output is not one JSON object.
func CountStatusClaims(dir string) (claims int, size int64, err error) {
	f, err := os.Open(filepath.Join(dir, statusOut))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	dec := json.NewDecoder(bufio.NewReaderSize(f, 1<<20))
	claims = -1
	depth := 0
	key := true // the next string at depth 1 is a key
	var last string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			if depth != 0 {
				return 0, size, fmt.Errorf("%s ends inside a value", statusOut)
			}
			break
		}
		if err != nil {
			return 0, size, fmt.Errorf("%s: %w", statusOut, err)
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if depth == 1 && last == "claims" && t == '[' {
					claims = 0
				} else if depth == 2 && claims >= 0 && last == "claims" {
					claims++
				}
				depth++
			case '}', ']':
				depth--
				if depth == 1 {
					key, last = true, ""
				}
			}
			continue
		case string:
			if depth == 1 && key {
				last, key = t, false
				continue
			}
		}
		if depth == 1 {
			key, last = true, ""
		}
	}
	if claims < 0 {
		return 0, size, fmt.Errorf("%s has no claims array", statusOut)
	}
	return claims, size, nil
}
