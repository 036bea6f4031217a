package reliability_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"
)

// TestSmokeDemoInATerminal drives the real binary in a real
// terminal: `steward demo` runs on a pseudo-terminal whose output a terminal emulator (x/vt)
// draws and answers, as a person's terminal would, at 80×24 and 200×50. It visits every
// view, opens help and closes it, types a filter and clears it, opens an orphan's action
// menu and cancels it (nothing is done, and the screen says so), opens the palette and
// closes it, and quits; the process ends with exit 0. Each step waits for the screen to show what
// the step must produce (a hang detector of a minute, never a fixed sleep).
func TestSmokeDemoInATerminal(t *testing.T) {
	bin := buildSteward(t)
	for _, sz := range []struct{ w, h int }{{80, 24}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			term := startInTerminal(t, sz.w, sz.h, bin, "demo", "--seed", "1")
			term.waitScreen(t, "the first snapshot", func(s string) bool { return strings.Contains(s, "locks ok") })
			titles := []string{"Overview", "Claims", "Contention", "Clarifications", "Orphans", "Activity", "Sessions"}
			for i, title := range titles {
				term.press(t, fmt.Sprint(i+1))
				term.waitScreen(t, "view "+title, func(s string) bool { return hasLine(s, title+" · ") })
			}
			term.press(t, "2")
			term.waitScreen(t, "the claims of the demo", func(s string) bool {
				return hasLine(s, "Claims · ") && strings.Contains(s, "demo/fleet#") && strings.Contains(s, "sim-worker-")
			})
			term.press(t, "?")
			term.waitScreen(t, "help", func(s string) bool { return strings.Contains(s, "Help — this view's keys first") })
			term.press(t, "\x1b")
			term.waitScreen(t, "help closed", func(s string) bool { return !strings.Contains(s, "Help —") && hasLine(s, "Claims · ") })
			term.press(t, "/")
			term.waitScreen(t, "the filter's mode", func(s string) bool { return strings.Contains(lastLineOf(s), "FILTER") })
			term.press(t, "fleet#")
			term.waitScreen(t, "the filter typed", func(s string) bool { return strings.Contains(s, "filter: fleet#") })
			term.press(t, "\x1b")
			term.waitScreen(t, "the filter cleared", func(s string) bool {
				return !strings.Contains(s, "filter: fleet#") && !strings.Contains(lastLineOf(s), "FILTER")
			})
			// A dialog: the action menu of an orphan (every orphan has an action or says why it
			// is inspect only), cancelled; then the palette, closed.
			term.press(t, "5")
			term.waitScreen(t, "orphans", func(s string) bool { return hasLine(s, "Orphans · ") && !strings.Contains(s, "Orphans · 0 of") })
			term.press(t, "a")
			term.waitScreen(t, "the action menu", func(s string) bool { return strings.Contains(s, "Actions for 1 row(s)") })
			term.press(t, "\x1b")
			term.waitScreen(t, "the menu cancelled", func(s string) bool {
				return !strings.Contains(s, "Actions for") && strings.Contains(s, "cancelled — nothing was done")
			})
			term.press(t, ":")
			term.waitScreen(t, "the palette", func(s string) bool { return strings.Contains(lastLineOf(s), "enter run") })
			term.press(t, "\x1b")
			term.waitScreen(t, "the palette closed", func(s string) bool { return !strings.Contains(lastLineOf(s), "enter run") && hasLine(s, "Orphans · ") })
			term.press(t, "q")
			if err := term.wait(t); err != nil {
				t.Fatalf("steward demo ended with %v; its screen:\n%s", err, term.screen())
			}
		})
	}
}

// buildSteward builds the binary of this module into the test's temp dir.
func buildSteward(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "steward")
	out, err := exec.Command("go", "build", "-C", filepath.Dir(filepath.Dir(file)), "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// terminal is a program on a pseudo-terminal, drawn by a terminal emulator that answers its
// queries (colours, capabilities) as a person's terminal does.
type terminal struct {
	pty  *os.File
	emu  *vt.SafeEmulator
	cmd  *exec.Cmd
	done chan error
	mu   sync.Mutex
	err  error
}

// startInTerminal starts bin with args on a w×h pseudo-terminal, in a private environment
// (no steward or Gitea variable of the developer's, a private config and state directory).
func startInTerminal(t *testing.T, w, h int, bin string, args ...string) *terminal {
	t.Helper()
	master, slave, err := openPTY(w, h)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Dir = t.TempDir()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "STEWARD_") || strings.HasPrefix(k, "GITEA_") || strings.HasPrefix(k, "XDG_") || k == "TERM" || k == "TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "TERM=xterm-256color", "XDG_CONFIG_HOME="+t.TempDir(), "XDG_STATE_HOME="+t.TempDir(), "TMPDIR="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	term := &terminal{pty: master, emu: vt.NewSafeEmulator(w, h), cmd: cmd, done: make(chan error, 1)}
	// The program's output goes to the emulator; the emulator's answers go back to the
	// program. The copy ends when the program has ended and the pty reads EIO.
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(term.emu, master)
	}()
	const stop = "\x00steward-smoke-stop\x00"
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		buf := make([]byte, 4096)
		for {
			n, err := term.emu.Read(buf)
			if err != nil || bytes.Contains(buf[:n], []byte(stop)) {
				return
			}
			_, _ = master.Write(buf[:n])
		}
	}()
	go func() { term.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-term.done
		}
		<-copied
		_, _ = io.WriteString(term.emu.InputPipe(), stop)
		<-answered
		master.Close()
	})
	return term
}

// press types keys as a person does: each byte as the terminal sends it.
func (term *terminal) press(t *testing.T, keys string) {
	t.Helper()
	if _, err := term.pty.Write([]byte(keys)); err != nil {
		t.Fatalf("typing %q: %v", keys, err)
	}
}

// screen is the emulator's screen as text.
func (term *terminal) screen() string { return ansi.Strip(term.emu.Render()) }

// waitScreen waits until the screen satisfies cond; a minute without it is a hang.
func (term *terminal) waitScreen(t *testing.T, what string, cond func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond(term.screen()) {
		select {
		case err := <-term.done:
			term.done <- err
			t.Fatalf("steward ended (%v) while waiting for %s; its screen:\n%s", err, what, term.screen())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the screen did not show %s within a minute:\n%s", what, term.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wait waits for the program to end (a minute at most) and returns how it ended.
func (term *terminal) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-term.done:
		term.done <- err
		return err
	case <-time.After(time.Minute):
		t.Fatalf("steward did not end within a minute of q; its screen:\n%s", term.screen())
	}
	return nil
}

// hasLine reports whether a line of s starts with prefix.
func hasLine(s, prefix string) bool {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// lastLineOf is the last line of s that is not blank (the footer).
func lastLineOf(s string) string {
	ls := strings.Split(strings.TrimRight(s, " \n"), "\n")
	return ls[len(ls)-1]
}

// openPTY opens a pseudo-terminal pair sized w×h.
func openPTY(w, h int) (master, slave *os.File, err error) {
	master, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	unlock := int32(0)
	if err := ioctl(master, syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	var n uint32
	if err := ioctl(master, syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	ws := struct{ row, col, x, y uint16 }{uint16(h), uint16(w), 0, 0}
	if err := ioctl(slave, syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); err != nil {
		master.Close()
		slave.Close()
		return nil, nil, fmt.Errorf("window size: %w", err)
	}
	return master, slave, nil
}

func ioctl(f *os.File, req, arg uintptr) error {
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, arg); e != 0 {
		return e
	}
	return nil
}
