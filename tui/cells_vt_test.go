package tui

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"steward/model"
)

// widthClaimants hold characters whose width steward (grapheme clusters) and a wcwidth
// terminal disagree on, as a worker could name itself.
var widthClaimants = []string{
	"soft\u00adhyphen-bot",
	"heart❤️-bot",
	"pride🏳️‍🌈-bot",
	"filler\u1160-bot",
	"thumbs👍🏽-bot",
	"flag🇺🇸-bot",
	"keycap1️⃣-bot",
	"zw\u200bspace-bot",
}

// widthSnapshot is the populated fixture with one claim per hostile claimant, expiring at
// base plus a few minutes each.
func widthSnapshot(base time.Duration, suffix string) *model.Snapshot {
	s := populated()
	for i, c := range widthClaimants {
		n := int64(300 + i)
		s.Claims = append(s.Claims, &model.Claim{Item: item(n), Role: "author", TaskClass: "author_issue_work",
			Claimant: &model.Claimant{Username: c + suffix, Profile: "author" + suffix}, SessionID: "sess-" + c,
			Phase: "implementing", LastHeartbeat: fixedNow.Add(-time.Duration(i) * 7 * time.Second),
			ExpiresAt: fixedNow.Add(base + time.Duration(i)*time.Minute + time.Duration(i*13)*time.Second),
			Contract:  "canonical", Freshness: "active", OwnerLiveness: model.LivenessAlive, LockFile: fmt.Sprintf("acme_widgets_%d.json", n)})
	}
	return s
}

// onlcr is the tty driver's output processing between the program and the terminal: with no
// tty input in raw mode, Bubble Tea leaves newline mapping to it (ONLCR: \n → \r\n).
type onlcr struct{ w io.Writer }

func (o onlcr) Write(p []byte) (int, error) {
	if _, err := o.w.Write(bytes.ReplaceAll(p, []byte("\n"), []byte("\r\n"))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// screenLines is what a terminal shows, one string per row, trailing blanks dropped.
func screenLines(s string, h int) []string {
	lines := strings.Split(ansi.Strip(s), "\n")
	for len(lines) < h {
		lines = append(lines, "")
	}
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return lines[:h]
}

// The workbench's real byte stream, drawn by a real terminal emulator
// (x/vt, measuring as wcwidth terminals do), shows exactly the frame steward meant — every
// cell in its column, no cell left from an earlier frame — through two frames whose
// hostile claimants and countdowns change. On the code before the fix the emulator never
// showed the intended frame: rows holding these claimants were shifted (the Claims view
// showed "Left 29m4557s"-like stale digits and cut columns).
func TestCellWidthsThroughATerminal(t *testing.T) {
	for _, sz := range []struct{ w, h int }{{160, 40}, {200, 50}} {
		t.Run(fmt.Sprintf("%dx%d", sz.w, sz.h), func(t *testing.T) {
			emu := vt.NewSafeEmulator(sz.w, sz.h)
			// The terminal answers the program's queries through a pipe that must be read. The
			// reader stops at a mark written once the program has ended (Emulator.Close would
			// race with Read inside x/vt).
			const stop = "\x00steward-test-stop\x00"
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				buf := make([]byte, 4096)
				var seen []byte
				for {
					n, err := emu.Read(buf)
					seen = append(seen, buf[:n]...)
					if err != nil || bytes.Contains(seen, []byte(stop)) {
						return
					}
					if len(seen) > len(stop) {
						seen = seen[len(seen)-len(stop):]
					}
				}
			}()

			// The expected frames come from a second root fed the same messages.
			want := newTestRoot(t, sz.w, sz.h, false)
			c, _, _ := testCore(t, false, func() time.Time { return fixedNow })
			prog := tea.NewProgram(New(Options{Core: c, Now: func() time.Time { return fixedNow }, ItemURL: want.opts.ItemURL}),
				tea.WithInput(strings.NewReader("")), tea.WithOutput(onlcr{emu}), tea.WithoutSignals(),
				tea.WithWindowSize(sz.w, sz.h), tea.WithColorProfile(colorprofile.ANSI256))
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { _, err := prog.Run(); done <- err }()
			t.Cleanup(func() {
				prog.Quit()
				cancel()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Error("the program did not stop")
				}
				_, _ = io.WriteString(emu.InputPipe(), stop)
				<-drained
			})

			step := func(name string, msgs ...tea.Msg) {
				t.Helper()
				for _, m := range msgs {
					prog.Send(m)
				}
				send(want, msgs...)
				exp := screenLines(want.Render(), sz.h)
				if !strings.Contains(strings.Join(exp, "\n"), "bot") {
					t.Fatalf("%s: the claims are not on the expected frame:\n%s", name, strings.Join(exp, "\n"))
				}
				var got []string
				deadline := time.NewTimer(15 * time.Second)
				defer deadline.Stop()
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for {
					got = screenLines(emu.Render(), sz.h)
					if strings.Join(got, "\n") == strings.Join(exp, "\n") {
						return
					}
					select {
					case <-tick.C:
						continue
					case <-deadline.C:
					case <-ctx.Done():
					}
					break
				}
				for i := range exp {
					if got[i] != exp[i] {
						t.Errorf("%s: row %d on the terminal:\n  got  %q\n  want %q", name, i, got[i], exp[i])
					}
				}
				t.FailNow()
			}
			step("first frame", SnapshotMsg{widthSnapshot(29*time.Minute, "")}, keyMsg("2"))
			step("countdowns and names change", SnapshotMsg{widthSnapshot(3*time.Minute, "-2")})
			step("shorter names", SnapshotMsg{widthSnapshot(45*time.Second, "")})
		})
	}
}
