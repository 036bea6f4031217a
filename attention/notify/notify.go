// Package notify runs the notify command (config notify.command) for an attention event:
// the configured program and arguments, executed directly — never through a shell, and
// nothing of the event in its arguments — with the event's fields as environment variables
// (attention.Env), a timeout, and its failure reported with what it wrote to stderr.
//
// It must never interpolate event text into a command line, pass a token, or wait longer
// than its timeout.
package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"steward/attention"
	"steward/termsafe"
)

// defaultTimeout bounds a notify command when none is configured.
const defaultTimeout = 10 * time.Second

// Command is the notify command: its program and arguments as configured.
type Command struct {
	Argv    []string
	Timeout time.Duration
	// Environ is the environment the command inherits before the event's variables;
	// os.Environ when nil. The caller leaves out what must not reach it (steward's token
	// variables: see scrub).
	Environ []string
}

// Result is how a run went.
type Result struct {
	Took time.Duration
	// Err says why the run failed (not found, exit status, timeout), with the end of its
	// stderr, made safe; nil when it exited 0.
	Err error
}

// errTimeout reports a command that did not finish within its timeout (it was killed).
var errTimeout = errors.New("notify command timed out")

// Run runs the command once for ev.
func (c Command) Run(ctx context.Context, ev attention.Event) Result {
	start := time.Now()
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return Result{Err: errors.New("notify.command is empty")}
	}
	to := c.Timeout
	if to <= 0 {
		to = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, to)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	base := c.Environ
	if base == nil {
		base = scrub(os.Environ())
	}
	cmd.Env = append(append([]string(nil), base...), attention.Env(ev)...)
	// Its own process group, killed whole on timeout: a shell script's children too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var errb bytes.Buffer
	cmd.Stderr = &limited{b: &errb, n: 4096}
	err := cmd.Run()
	res := Result{Took: time.Since(start)}
	if err == nil {
		return res
	}
	tail := strings.TrimSpace(termsafe.Line(errb.String()))
	if len(tail) > 300 {
		tail = "…" + tail[len(tail)-300:]
	}
	if tail != "" {
		tail = ": " + tail
	}
	name := termsafe.Line(c.Argv[0])
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.Err = fmt.Errorf("%w after %s (%s killed)%s", errTimeout, to, name, tail)
	default:
		res.Err = fmt.Errorf("notify command %s failed: %v%s", name, err, tail)
	}
	return res
}

// scrub returns env without the variables that carry steward's or Gitea's secrets
// (STEWARD_GITEA_TOKEN, GITEA_TOKEN and any *TOKEN*, *PASSWORD*, *SECRET* name).
func scrub(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		if strings.Contains(u, "TOKEN") || strings.Contains(u, "PASSWORD") || strings.Contains(u, "SECRET") ||
			u == "PGPASSWORD" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// limited keeps the first n bytes written.
type limited struct {
	b *bytes.Buffer
	n int
}

func (l *limited) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		if len(p) > room {
			l.b.Write(p[:room])
		} else {
			l.b.Write(p)
		}
	}
	return len(p), nil
}
