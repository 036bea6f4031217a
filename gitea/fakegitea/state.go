package fakegitea

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Server holds users, repositories and their items. The zero value is not usable; call New.
type Server struct {
	mu      sync.Mutex
	baseURL string
	users   map[string]string // token -> login
	repos   map[string]*repo  // "owner/name"
	nextID  int64
	now     func() time.Time
	fault   func(*http.Request) int
	muxOnce sync.Once
	mux     *http.ServeMux
}

type label struct {
	id                 int64
	name, color, descr string
}

type event struct {
	id               int64
	typ              string // "comment" or "label"
	author, body     string
	created, updated time.Time
	labelID          int64
}

type pull struct {
	head, base, headSHA string
	merged              bool
	mergedAt            *time.Time
}

type issue struct {
	id, number       int64
	title, body      string
	author, state    string
	labels           []int64
	created, updated time.Time
	closed           *time.Time
	events           []*event
	pr               *pull
}

type repo struct {
	id            int64
	owner, name   string
	defaultBranch string
	labels        []*label
	issues        map[int64]*issue
	nextIndex     int64
	branches      map[string]string // name -> head sha
}

// New returns an empty server. baseURL is used in html_url and Link headers (set it with
// SetBaseURL once the listener's address is known).
func New() *Server {
	return &Server{
		users: map[string]string{},
		repos: map[string]*repo{},
		now:   func() time.Time { return time.Now().UTC() },
	}
}

// SetClock makes now the server's clock for every timestamp it writes from here on (created,
// updated, closed, merged; comments and label events): the demo's virtual clock, so that a
// compressed or virtual run's items age as its lock files and leases do. nil restores the
// wall clock.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	s.now = func() time.Time { return now().UTC() }
}

// SetBaseURL sets the URL the server is reached at (e.g. httptest.Server.URL).
func (s *Server) SetBaseURL(u string) { s.mu.Lock(); s.baseURL = u; s.mu.Unlock() }

// AddUser registers login with an access token accepted as "Authorization: token <token>".
func (s *Server) AddUser(login, token string) { s.mu.Lock(); s.users[token] = login; s.mu.Unlock() }

// SetFault installs a hook run before every API request; a non-zero status it returns is sent
// instead of the real answer (tests use it to fail page 3, or everything).
func (s *Server) SetFault(f func(*http.Request) int) { s.mu.Lock(); s.fault = f; s.mu.Unlock() }

func (s *Server) id() int64 { s.nextID++; return s.nextID }

// Repo is a handle for seeding one repository.
type Repo struct {
	s   *Server
	key string
}

// CreateRepo creates an empty repository with a "main" branch (like auto_init).
func (s *Server) CreateRepo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := owner + "/" + name
	s.repos[key] = &repo{id: s.id(), owner: owner, name: name, defaultBranch: "main", issues: map[int64]*issue{},
		branches: map[string]string{"main": fakeSHA(key + "main")}}
	return &Repo{s: s, key: key}
}

func fakeSHA(seed string) string { h := sha1.Sum([]byte(seed)); return hex.EncodeToString(h[:]) }

func (r *Repo) with(f func(rp *repo)) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	f(r.s.repos[r.key])
}

func (s *Server) ensureLabel(rp *repo, name string) *label {
	for _, l := range rp.labels {
		if l.name == name {
			return l
		}
	}
	l := &label{id: s.id(), name: name, color: "ededed"}
	rp.labels = append(rp.labels, l)
	return l
}

// CreateLabel creates a label (if missing) and returns its id.
func (r *Repo) CreateLabel(name, color string) (id int64) {
	r.with(func(rp *repo) { l := r.s.ensureLabel(rp, name); l.color = color; id = l.id })
	return id
}

func (s *Server) newIssue(rp *repo, author, title, body string) *issue {
	rp.nextIndex++
	now := s.now()
	it := &issue{
		id:      s.id(),
		number:  rp.nextIndex,
		title:   title,
		body:    body,
		author:  author,
		state:   "open",
		created: now,
		updated: now,
	}
	rp.issues[it.number] = it
	return it
}

func (s *Server) addLabel(it *issue, actor string, l *label) {
	for _, id := range it.labels {
		if id == l.id {
			return
		}
	}
	it.labels = append(it.labels, l.id)
	now := s.now()
	it.events = append(
		it.events,
		&event{id: s.id(), typ: "label", author: actor, body: "1", created: now, updated: now, labelID: l.id},
	)
	it.updated = now
}

func (s *Server) removeLabel(it *issue, actor string, id int64) bool {
	for i, x := range it.labels {
		if x == id {
			it.labels = append(it.labels[:i], it.labels[i+1:]...)
			now := s.now()
			it.events = append(
				it.events,
				&event{id: s.id(), typ: "label", author: actor, created: now, updated: now, labelID: id},
			)
			it.updated = now
			return true
		}
	}
	return false
}

func (s *Server) addComment(it *issue, author, body string) *event {
	now := s.now()
	e := &event{id: s.id(), typ: "comment", author: author, body: body, created: now, updated: now}
	it.events = append(it.events, e)
	it.updated = now
	return e
}

// CreateIssue opens an issue by author carrying labels (created when missing) and returns its
// number. As in Gitea, each initial label leaves a label event in the timeline.
func (r *Repo) CreateIssue(author, title, body string, labels ...string) (n int64) {
	r.with(func(rp *repo) {
		it := r.s.newIssue(rp, author, title, body)
		for _, name := range labels {
			r.s.addLabel(it, author, r.s.ensureLabel(rp, name))
		}
		n = it.number
	})
	return n
}

// AddLabel adds a label (created when missing) to an issue or pull request, as actor.
func (r *Repo) AddLabel(actor string, number int64, name string) {
	r.with(func(rp *repo) {
		if it := rp.issues[number]; it != nil {
			r.s.addLabel(it, actor, r.s.ensureLabel(rp, name))
		}
	})
}

// RemoveLabel removes a label from an issue or pull request, as actor.
func (r *Repo) RemoveLabel(actor string, number int64, name string) {
	r.with(func(rp *repo) {
		if it := rp.issues[number]; it != nil {
			r.s.removeLabel(it, actor, r.s.ensureLabel(rp, name).id)
		}
	})
}

// AddComment comments on an issue or pull request as author and returns the comment id.
func (r *Repo) AddComment(author string, number int64, body string) (id int64) {
	r.with(func(rp *repo) {
		if it := rp.issues[number]; it != nil {
			id = r.s.addComment(it, author, body).id
		}
	})
	return id
}

// CloseIssue closes an issue or pull request (without merging).
func (r *Repo) CloseIssue(number int64) {
	r.with(func(rp *repo) {
		if it := rp.issues[number]; it != nil && it.state == "open" {
			now := r.s.now()
			it.state, it.closed, it.updated = "closed", &now, now
		}
	})
}

// CreateBranch creates a branch (from nothing: a fake head SHA) and returns its head SHA.
func (r *Repo) CreateBranch(name string) (sha string) {
	r.with(func(rp *repo) {
		if _, ok := rp.branches[name]; !ok {
			rp.branches[name] = fakeSHA(fmt.Sprintf("%s/%s/%d", r.key, name, r.s.id()))
		}
		sha = rp.branches[name]
	})
	return sha
}

// CreatePR opens a pull request from head (created when missing) into base and returns its
// number (shared with issues, as in Gitea).
func (r *Repo) CreatePR(author, title, head, base string) int64 {
	sha := r.CreateBranch(head)
	var n int64
	r.with(func(rp *repo) {
		it := r.s.newIssue(rp, author, title, "")
		it.pr = &pull{head: head, base: base, headSHA: sha}
		n = it.number
	})
	return n
}

// MergePR marks an open pull request merged and closed.
func (r *Repo) MergePR(number int64) {
	r.with(func(rp *repo) {
		if it := rp.issues[number]; it != nil && it.pr != nil && it.state == "open" {
			now := r.s.now()
			it.state, it.closed, it.updated = "closed", &now, now
			it.pr.merged, it.pr.mergedAt = true, &now
		}
	})
}

// sortedIssues returns the repository's items, newest first (Gitea's default order).
func sortedIssues(rp *repo) []*issue {
	out := make([]*issue, 0, len(rp.issues))
	for _, it := range rp.issues {
		out = append(out, it)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].number > out[j].number })
	return out
}
