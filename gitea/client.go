package gitea

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	sdk "code.gitea.io/sdk/gitea"
	"steward/gitea/gitearec"
)

// Defaults used by New for zero Config fields.
const (
	defaultPageSize       = 50 // Gitea's default MAX_RESPONSE_ITEMS
	defaultRequestTimeout = 30 * time.Second
)

// Config says which repository to read and how. Only Login, Owner and Repo are required.
type Config struct {
	Login          Login
	Owner, Repo    string
	PageSize       int               // items per page; tests use a small one to force paging
	MarkerLabels   []string          // clarification markers; default DefaultMarkerLabels
	BlockedLabel   string            // default DefaultBlockedLabel
	RequestTimeout time.Duration     // per HTTP request; default defaultRequestTimeout
	Transport      http.RoundTripper // default: a clone of http.DefaultTransport
	Logger         *slog.Logger      // request log (method, path, status, duration); default: none
	Now            func() time.Time  // clock for Health.ReadAt; default time.Now
}

// Client reads facts from and writes primitives to one Gitea repository. It is safe for
// concurrent use. New does no network IO.
type Client struct {
	cfg  Config
	base *url.URL
	rt   http.RoundTripper
	log  *slog.Logger
	self selfLogin
}

// New validates cfg and returns a client. It never contacts the server.
func New(cfg Config) (*Client, error) {
	if cfg.Owner == "" || cfg.Repo == "" {
		return nil, errors.New("gitea: config needs Owner and Repo")
	}
	if cfg.Login.Token.IsZero() {
		return nil, errors.New("gitea: login has no token")
	}
	u, err := url.Parse(strings.TrimSuffix(cfg.Login.URL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("gitea: login URL is not an http(s) URL: %q", scrub(cfg.Login.URL, cfg.Login.Token))
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = defaultPageSize
	}
	if len(cfg.MarkerLabels) == 0 {
		cfg.MarkerLabels = gitearec.DefaultMarkerLabels
	}
	if cfg.BlockedLabel == "" {
		cfg.BlockedLabel = gitearec.DefaultBlockedLabel
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = defaultRequestTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	rt := cfg.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if cfg.Login.Insecure {
			t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // tea's "insecure", warned at login
		}
		rt = t
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Client{cfg: cfg, base: u, rt: rt, log: log}, nil
}

// MarkerLabels returns the configured clarification marker labels.
func (c *Client) MarkerLabels() []string { return append([]string(nil), c.cfg.MarkerLabels...) }

// sendState records how far one call got on the wire.
type sendState struct{ wrote atomic.Bool }

type tracingTransport struct {
	base http.RoundTripper
	st   *sendState
}

func (t *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	trace := &httptrace.ClientTrace{WroteHeaders: func() { t.st.wrote.Store(true) }}
	return t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
}

// call runs one SDK request with its own deadline and classifies its failure.
func (c *Client) call(ctx context.Context, op string, fn func(*sdk.Client) (*sdk.Response, error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	st := &sendState{}
	hc := &http.Client{Transport: &tracingTransport{base: c.rt, st: st}}
	s, err := sdk.NewClient(c.base.String(), sdk.SetHTTPClient(hc), sdk.SetToken(c.cfg.Login.Token.value),
		sdk.SetContext(ctx), sdk.SetGiteaVersion(""), sdk.SetUserAgent("steward"))
	if err != nil {
		return &callError{op: op, class: ErrNotSent, msg: scrub(err.Error(), c.cfg.Login.Token)}
	}
	start := time.Now()
	resp, err := fn(s)
	var status int
	if resp != nil && resp.Response != nil {
		status = resp.StatusCode
	}
	err = c.classify(op, status, st.wrote.Load(), err)
	c.log.Debug("gitea request", "op", op, "status", status, "duration", time.Since(start).Round(time.Millisecond),
		"outcome", string(Classify(err)))
	return err
}

func (c *Client) classify(op string, status int, wrote bool, err error) error {
	if err == nil && (status == 0 || status/100 == 2) {
		return nil
	}
	msg := ""
	if err != nil {
		msg = scrub(err.Error(), c.cfg.Login.Token)
	}
	switch {
	case status >= 300:
		return &HTTPError{Op: op, Status: status, Message: msg}
	case status/100 == 2:
		// The server answered success but the body could not be read or decoded.
		return &callError{op: op, class: ErrOutcomeUnknown, msg: "response unreadable: " + msg, causes: safeCauses(err)}
	case wrote:
		return &callError{op: op, class: ErrOutcomeUnknown, msg: msg, causes: safeCauses(err)}
	default:
		return &callError{op: op, class: ErrNotSent, msg: msg, causes: safeCauses(err)}
	}
}

// getJSON performs a GET the SDK cannot decode (the timeline: the SDK types "label" as a list,
// Gitea sends an object) with the same deadline, tracing and classification as call.
func (c *Client) getJSON(ctx context.Context, op, path string, q url.Values, out any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	st := &sendState{}
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/api/v1" + path
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, &callError{op: op, class: ErrNotSent, msg: scrub(err.Error(), c.cfg.Login.Token)}
	}
	req.Header.Set("Authorization", "token "+c.cfg.Login.Token.value)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "steward")
	start := time.Now()
	resp, err := (&http.Client{Transport: &tracingTransport{base: c.rt, st: st}}).Do(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
		defer resp.Body.Close()
		var body []byte
		body, err = io.ReadAll(io.LimitReader(resp.Body, 32<<20))
		if err == nil && status/100 == 2 {
			err = json.Unmarshal(body, out)
		} else if err == nil {
			var m struct {
				Message string `json:"message"`
			}
			_ = json.Unmarshal(body, &m)
			err = errors.New(m.Message)
		}
	}
	err = c.classify(op, status, st.wrote.Load(), err)
	c.log.Debug("gitea request", "op", op, "status", status, "duration", time.Since(start).Round(time.Millisecond),
		"outcome", string(Classify(err)))
	return status, err
}

// Repository returns the owner and name of the repository the client is bound to.
func (c *Client) Repository() (owner, repo string) { return c.cfg.Owner, c.cfg.Repo }

// Scrub returns s with the client's token removed (for a redactor of what is shown).
func (c *Client) Scrub(s string) string { return c.cfg.Login.Token.Scrub(s) }
