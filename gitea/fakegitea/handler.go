package fakegitea

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

var _ http.Handler = (*Server)(nil)

// ServeHTTP serves the API subset. Every route but /version needs "Authorization: token <t>".
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.muxOnce.Do(s.buildMux)
	s.mu.Lock()
	fault := s.fault
	s.mu.Unlock()
	if fault != nil {
		if code := fault(r); code != 0 {
			writeJSON(w, code, obj{"message": "injected fault"})
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) buildMux() {
	mux := http.NewServeMux()
	handlers := map[string]func(http.ResponseWriter, *http.Request, *repo, string){
		"GET /repos/{owner}/{repo}":                               s.getRepo,
		"GET /repos/{owner}/{repo}/issues":                        s.listIssues,
		"GET /repos/{owner}/{repo}/issues/{index}":                s.getIssue,
		"GET /repos/{owner}/{repo}/issues/{index}/comments":       s.listComments,
		"POST /repos/{owner}/{repo}/issues/{index}/comments":      s.createComment,
		"GET /repos/{owner}/{repo}/issues/{index}/timeline":       s.timeline,
		"POST /repos/{owner}/{repo}/issues/{index}/labels":        s.addIssueLabels,
		"DELETE /repos/{owner}/{repo}/issues/{index}/labels/{id}": s.removeIssueLabel,
		"GET /repos/{owner}/{repo}/labels":                        s.listLabels,
		"POST /repos/{owner}/{repo}/labels":                       s.createLabel,
		"GET /repos/{owner}/{repo}/pulls":                         s.listPulls,
		"GET /repos/{owner}/{repo}/pulls/{index}":                 s.getPull,
		"GET /repos/{owner}/{repo}/branches/{branch...}":          s.getBranch,
	}
	mux.HandleFunc("GET /api/v1/version", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, obj{"version": "1.26.0"})
	})
	mux.HandleFunc("GET /api/v1/user", func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
		s.mu.Lock()
		login, known := s.users[tok]
		s.mu.Unlock()
		if !ok || !known {
			writeJSON(w, http.StatusUnauthorized, obj{"message": "user does not exist or token is invalid"})
			return
		}
		writeJSON(w, http.StatusOK, userJSON(login))
	})
	for pattern, h := range handlers {
		method, path, _ := strings.Cut(pattern, " ")
		mux.HandleFunc(method+" /api/v1"+path, s.authed(h))
	}
	s.mux = mux
}

func (s *Server) authed(h func(http.ResponseWriter, *http.Request, *repo, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
		s.mu.Lock()
		defer s.mu.Unlock()
		login, known := s.users[tok]
		if !ok || !known {
			writeJSON(w, http.StatusUnauthorized, obj{"message": "user does not exist or token is invalid"})
			return
		}
		rp := s.repos[r.PathValue("owner")+"/"+r.PathValue("repo")]
		if rp == nil {
			writeJSON(w, http.StatusNotFound, obj{"message": "repository does not exist"})
			return
		}
		h(w, r, rp, login)
	}
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json;charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, obj{"message": "The target couldn't be found."})
}

func (s *Server) item(w http.ResponseWriter, r *http.Request, rp *repo) *issue {
	n, err := strconv.ParseInt(r.PathValue("index"), 10, 64)
	if it := rp.issues[n]; err == nil && it != nil {
		return it
	}
	notFound(w)
	return nil
}

// paginate applies page/limit as Gitea does (default 30, max 50) and sets X-Total-Count and
// Link headers.
func (s *Server) paginate(w http.ResponseWriter, r *http.Request, total int) (lo, hi int) {
	q := r.URL.Query()
	page, _ := strconv.Atoi(q.Get("page"))
	limit, _ := strconv.Atoi(q.Get("limit"))
	if page <= 0 {
		page = 1
	}
	if limit <= 0 {
		limit = 30
	}
	limit = min(limit, 50)
	pages := (total + limit - 1) / limit
	link := func(p int, rel string) string {
		u := *r.URL
		qq := u.Query()
		qq.Set("page", strconv.Itoa(p))
		u.RawQuery = qq.Encode()
		return fmt.Sprintf("<%s%s>; rel=%q", s.baseURL, u.RequestURI(), rel)
	}
	var links []string
	if page < pages {
		links = append(links, link(page+1, "next"), link(pages, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"), link(page-1, "prev"))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(total))
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ","))
	}
	lo = min((page-1)*limit, total)
	return lo, min(lo+limit, total)
}

func (s *Server) getRepo(w http.ResponseWriter, _ *http.Request, rp *repo, _ string) {
	writeJSON(w, http.StatusOK, s.repoJSON(rp))
}

// listIssues filters by state (default open), type (issues|pulls) and labels (any of; names the
// repository lacks are discarded, as Gitea does).
func (s *Server) listIssues(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	var want []int64
	for _, name := range strings.Split(q.Get("labels"), ",") {
		for _, l := range rp.labels {
			if name != "" && l.name == name {
				want = append(want, l.id)
			}
		}
	}
	var match []*issue
	for _, it := range sortedIssues(rp) {
		if (state != "all" && it.state != state) || (q.Get("type") == "issues" && it.pr != nil) ||
			(q.Get("type") == "pulls" && it.pr == nil) || (len(want) > 0 && !hasAny(it.labels, want)) {
			continue
		}
		match = append(match, it)
	}
	lo, hi := s.paginate(w, r, len(match))
	out := []obj{}
	for _, it := range match[lo:hi] {
		out = append(out, s.issueJSON(rp, it))
	}
	writeJSON(w, http.StatusOK, out)
}

func hasAny(have, want []int64) bool {
	for _, h := range have {
		for _, x := range want {
			if h == x {
				return true
			}
		}
	}
	return false
}

func (s *Server) getIssue(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	if it := s.item(w, r, rp); it != nil {
		writeJSON(w, http.StatusOK, s.issueJSON(rp, it))
	}
}

// listComments returns every comment and ignores page/limit, as Gitea 1.26 does.
func (s *Server) listComments(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	it := s.item(w, r, rp)
	if it == nil {
		return
	}
	out := []obj{}
	for _, e := range it.events {
		if e.typ == "comment" {
			out = append(out, s.commentJSON(rp, it, e))
		}
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(out)))
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createComment(w http.ResponseWriter, r *http.Request, rp *repo, login string) {
	it := s.item(w, r, rp)
	if it == nil {
		return
	}
	var body struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, obj{"message": "body is required"})
		return
	}
	writeJSON(w, http.StatusCreated, s.commentJSON(rp, it, s.addComment(it, login, body.Body)))
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	it := s.item(w, r, rp)
	if it == nil {
		return
	}
	lo, hi := s.paginate(w, r, len(it.events))
	out := []obj{}
	for _, e := range it.events[lo:hi] {
		out = append(out, s.timelineJSON(rp, it, e))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) addIssueLabels(w http.ResponseWriter, r *http.Request, rp *repo, login string) {
	it := s.item(w, r, rp)
	if it == nil {
		return
	}
	var body struct {
		Labels []int64 `json:"labels"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, obj{"message": err.Error()})
		return
	}
	for _, id := range body.Labels {
		if l := s.labelByID(rp, id); l != nil {
			s.addLabel(it, login, l)
		}
	}
	out := []obj{}
	for _, id := range it.labels {
		out = append(out, s.labelJSON(rp, s.labelByID(rp, id)))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) removeIssueLabel(w http.ResponseWriter, r *http.Request, rp *repo, login string) {
	it := s.item(w, r, rp)
	if it == nil {
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if s.labelByID(rp, id) == nil {
		writeJSON(w, http.StatusUnprocessableEntity, obj{"message": "label does not exist"})
		return
	}
	s.removeLabel(it, login, id)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) listLabels(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	lo, hi := s.paginate(w, r, len(rp.labels))
	out := []obj{}
	for _, l := range rp.labels[lo:hi] {
		out = append(out, s.labelJSON(rp, l))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) createLabel(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	var body struct{ Name, Color, Description string }
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Name == "" {
		writeJSON(w, http.StatusUnprocessableEntity, obj{"message": "name is required"})
		return
	}
	for _, l := range rp.labels {
		if l.name == body.Name {
			writeJSON(w, http.StatusConflict, obj{"message": "label already exists"})
			return
		}
	}
	l := &label{id: s.id(), name: body.Name, color: strings.TrimPrefix(body.Color, "#"), descr: body.Description}
	rp.labels = append(rp.labels, l)
	writeJSON(w, http.StatusCreated, s.labelJSON(rp, l))
}

func (s *Server) listPulls(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	var match []*issue
	for _, it := range sortedIssues(rp) {
		if it.pr != nil && (state == "all" || it.state == state) {
			match = append(match, it)
		}
	}
	lo, hi := s.paginate(w, r, len(match))
	out := []obj{}
	for _, it := range match[lo:hi] {
		out = append(out, s.pullJSON(rp, it))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getPull(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	if it := s.item(w, r, rp); it != nil {
		if it.pr == nil {
			notFound(w)
			return
		}
		writeJSON(w, http.StatusOK, s.pullJSON(rp, it))
	}
}

func (s *Server) getBranch(w http.ResponseWriter, r *http.Request, rp *repo, _ string) {
	name, _ := url.PathUnescape(r.PathValue("branch"))
	sha, ok := rp.branches[name]
	if !ok {
		writeJSON(w, http.StatusNotFound, obj{"message": "Branch doesn't exist."})
		return
	}
	writeJSON(w, http.StatusOK, obj{"name": name, "commit": obj{"id": sha, "message": "fake commit"}})
}
