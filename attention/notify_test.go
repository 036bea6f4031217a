package attention

import (
	"strings"
	"testing"
	"time"

	"steward/model"
)

const hostile = "Fix it\x1b]52;c;cGF3bmVk\x07 now\x1b[2J; $(touch pwned) `id` \a"

func TestSequence(t *testing.T) {
	for _, tc := range []struct {
		name          string
		bell, desktop bool
		mux           Multiplexer
		want          string
	}{
		{name: "nothing", want: ""},
		{name: "bell only", bell: true, want: "\a"},
		{name: "desktop", desktop: true, want: "\x1b]9;t: b\x1b\\\x1b]777;notify;t;b\x1b\\"},
		{name: "tmux doubles every ESC inside its passthrough", desktop: true, mux: muxTmux,
			want: "\x1bPtmux;\x1b\x1b]9;t: b\x1b\x1b\\\x1b\\\x1bPtmux;\x1b\x1b]777;notify;t;b\x1b\x1b\\\x1b\\"},
		{name: "screen", bell: true, desktop: true, mux: muxScreen, want: "\a\x1bP\x1b]9;t: b\x1b\\\x1b\\\x1bP\x1b]777;notify;t;b\x1b\\\x1b\\"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sequence("t", "b", tc.bell, tc.desktop, tc.mux); got != tc.want {
				t.Fatalf("Sequence = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSequenceStripsHostileText: an item title cannot end the notification early, write
// the clipboard, clear the screen or ring the bell of its own.
func TestSequenceStripsHostileText(t *testing.T) {
	got := Sequence("steward", hostile, false, true, muxNone)
	want := "\x1b]9;steward: Fix it now, $(touch pwned) `id` \x1b\\\x1b]777;notify;steward;Fix it now, $(touch pwned) `id` \x1b\\"
	if got != want {
		t.Fatalf("Sequence = %q\nwant %q", got, want)
	}
	if strings.Count(got, "\x1b") != 4 || strings.Contains(got, "\a") {
		t.Fatalf("a sequence from the text survived: %q", got)
	}
	if long := safe(strings.Repeat("x", 500)); len([]rune(long)) != 200 || !strings.HasSuffix(long, "…") {
		t.Fatalf("Safe does not cap: %d runes", len([]rune(long)))
	}
}

func TestDetectMux(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, tc := range []struct {
		get  func(string) string
		want Multiplexer
	}{
		{env(), muxNone},
		{env("TERM", "xterm-256color"), muxNone},
		{env("TMUX", "/tmp/tmux-0/default,1,0", "TERM", "screen-256color"), muxTmux},
		{env("STY", "123.pts-0"), muxScreen},
		{env("TERM", "screen"), muxScreen},
	} {
		if got := tc.get; DetectMux(got) != tc.want {
			t.Errorf("DetectMux = %v, want %v", DetectMux(got), tc.want)
		}
	}
}

func TestNoticeAndEnv(t *testing.T) {
	e := question(1, t0)
	e.Title = hostile
	e.URL = "https://gitea.example/acme/w/issues/1"
	evs := []Event{
		{Type: EventEntered, Entry: orphan("L1")},
		{Type: eventEscalated, Entry: e, Level: 1, Age: 90 * time.Minute, Notify: true},
		{Type: EventEntered, Entry: question(2, t0), Notify: true},
	}
	title, body, ok := Notice(evs)
	if !ok || title != "steward: escalated" || !strings.Contains(body, "waiting 1h30m, SLA 1h00m") || !strings.HasSuffix(body, "(and 1 more)") {
		t.Fatalf("Notice = %q %q %v", title, body, ok)
	}
	if _, _, ok := Notice(evs[:1]); ok {
		t.Fatal("an operator entry alone notified")
	}
	env := strings.Join(Env(evs[1]), "\n")
	for _, want := range []string{"STEWARD_EVENT=escalated", "STEWARD_ITEM=acme/w#1", "STEWARD_NEED=" + string(model.NeedHuman),
		"STEWARD_AGE_S=5400", "STEWARD_SLA_S=3600", "STEWARD_LEVEL=1", "STEWARD_URL=https://gitea.example/acme/w/issues/1",
		"STEWARD_TITLE=Fix it now; $(touch pwned) `id` "} {
		if !strings.Contains(env, want+"\n") {
			t.Errorf("env lacks %q:\n%s", want, env)
		}
	}
	if strings.ContainsAny(env, "\x1b\a") {
		t.Fatalf("a control character reached the environment: %q", env)
	}
}
