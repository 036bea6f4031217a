package gitea_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"steward/gitea"
	"steward/gitea/giteatest"
)

// lockedBuffer collects log output from concurrent requests.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}
func (b *lockedBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// TestTokenNeverLeaks drives clients holding a known token through succeeding and failing
// calls — real Gitea direct and through a faulty proxy, a server that echoes the Authorization
// header into its error messages, and a URL carrying the token as userinfo — and checks that no
// error string, health reason or log line contains the token.
func TestTokenNeverLeaks(t *testing.T) {
	t.Parallel()
	b, n, p, _, _ := faultSetup(t, time.Second)
	secret := b.MaintainerToken
	logs := &lockedBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var seen []string
	record := func(what string, err error, h *gitea.Health) {
		if err != nil {
			seen = append(seen, what+": "+err.Error(), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err))
		}
		if h != nil {
			js, _ := json.Marshal(h)
			seen = append(seen, what+": "+h.Reason, fmt.Sprintf("%+v", *h), string(js))
		}
	}
	mk := func(url string) *gitea.Client {
		c, err := gitea.New(gitea.Config{Login: gitea.Login{URL: url, Token: gitea.NewToken(secret)}, Owner: b.Owner,
			Repo: b.Repo, PageSize: 5, RequestTimeout: time.Second, Logger: logger,
			Transport: &http.Transport{DisableKeepAlives: true}})
		record("new "+url, err, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	exercise := func(what string, c *gitea.Client) {
		ctx := context.Background()
		_, h := c.Version(ctx)
		record(what+" version", nil, &h)
		_, h = c.Clarifications(ctx, gitea.ClarificationOptions{})
		record(what+" clarifications", nil, &h)
		_, h = c.PullRequest(ctx, 424242)
		record(what+" pr", nil, &h)
		_, err := c.CreateComment(ctx, n, "hygiene "+what)
		record(what+" comment", err, nil)
		err = c.AddLabels(ctx, n, "no-such-label")
		record(what+" labels", err, nil)
		_, err = c.GetIssue(ctx, 999999)
		record(what+" get missing", err, nil)
	}
	via := mk(p.URL)
	for _, m := range []struct {
		name string
		mode giteatest.Mode
		d    time.Duration
	}{{"forward", giteatest.Forward, 0}, {"drop", giteatest.DropResponse, 0}, {"delay", giteatest.Delay, 3 * time.Second}, {"refuse", giteatest.Refuse, 0}} {
		p.SetMode(m.mode, m.d)
		exercise(m.name, via)
	}

	// A hostile server that quotes the Authorization header back in every error.
	echo := &echoServer{}
	srv := newEchoServer(t, echo)
	exercise("echo", mk(srv))
	if echo.hits.Load() == 0 {
		t.Fatal("the echo server was never called")
	}

	// The token as URL userinfo, on a closed port and on the real server's address.
	exercise("userinfo-closed", mk(strings.Replace(closedPortURL(t), "://", "://steward:"+secret+"@", 1)))

	_, err := gitea.New(gitea.Config{Login: gitea.Login{URL: "ftp://x:" + secret + "@h", Token: gitea.NewToken(secret)}, Owner: "o", Repo: "r"})
	record("bad url", err, nil)

	seen = append(seen, strings.Split(logs.String(), "\n")...)
	errorsSeen := 0
	for _, s := range seen {
		if strings.Contains(s, secret) {
			t.Errorf("token leaked: %s", s)
		}
		if strings.Contains(s, "gitea:") {
			errorsSeen++
		}
	}
	if errorsSeen < 20 || !strings.Contains(logs.String(), "gitea request") {
		t.Fatalf("too little was exercised: %d error texts, logs:\n%s", errorsSeen, logs.String())
	}
}
