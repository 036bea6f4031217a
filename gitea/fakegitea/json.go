package fakegitea

import (
	"fmt"
	"time"
)

// The functions here render Gitea's JSON shapes (only the fields steward and the SDK read).

type obj = map[string]any

func userJSON(login string) obj { return obj{"id": 1, "login": login, "username": login} }

func (s *Server) labelJSON(rp *repo, l *label) obj {
	return obj{"id": l.id, "name": l.name, "color": l.color, "description": l.descr,
		"url": fmt.Sprintf("%s/api/v1/repos/%s/%s/labels/%d", s.baseURL, rp.owner, rp.name, l.id)}
}

func (s *Server) labelByID(rp *repo, id int64) *label {
	for _, l := range rp.labels {
		if l.id == id {
			return l
		}
	}
	return nil
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.Format(time.RFC3339)
}

func (s *Server) htmlURL(rp *repo, it *issue) string {
	kind := "issues"
	if it.pr != nil {
		kind = "pulls"
	}
	return fmt.Sprintf("%s/%s/%s/%s/%d", s.baseURL, rp.owner, rp.name, kind, it.number)
}

func (s *Server) issueJSON(rp *repo, it *issue) obj {
	labels := []obj{}
	for _, id := range it.labels {
		if l := s.labelByID(rp, id); l != nil {
			labels = append(labels, s.labelJSON(rp, l))
		}
	}
	comments := 0
	for _, e := range it.events {
		if e.typ == "comment" {
			comments++
		}
	}
	o := obj{"id": it.id, "number": it.number, "title": it.title, "body": it.body, "user": userJSON(it.author),
		"state": it.state, "labels": labels, "comments": comments, "html_url": s.htmlURL(rp, it),
		"url":        fmt.Sprintf("%s/api/v1/repos/%s/%s/issues/%d", s.baseURL, rp.owner, rp.name, it.number),
		"created_at": it.created.Format(time.RFC3339), "updated_at": it.updated.Format(time.RFC3339),
		"closed_at": timeOrNil(it.closed), "pull_request": nil,
		"repository": obj{"id": rp.id, "name": rp.name, "owner": rp.owner, "full_name": rp.owner + "/" + rp.name}}
	if it.pr != nil {
		o["pull_request"] = obj{"merged": it.pr.merged, "merged_at": timeOrNil(it.pr.mergedAt), "html_url": s.htmlURL(rp, it)}
	}
	return o
}

func (s *Server) pullJSON(rp *repo, it *issue) obj {
	o := s.issueJSON(rp, it)
	delete(o, "pull_request")
	delete(o, "repository")
	o["merged"] = it.pr.merged
	o["merged_at"] = timeOrNil(it.pr.mergedAt)
	o["head"] = obj{"label": it.pr.head, "ref": it.pr.head, "sha": it.pr.headSHA, "repo_id": rp.id}
	o["base"] = obj{"label": it.pr.base, "ref": it.pr.base, "sha": rp.branches[it.pr.base], "repo_id": rp.id}
	return o
}

func (s *Server) commentJSON(rp *repo, it *issue, e *event) obj {
	return obj{"id": e.id, "user": userJSON(e.author), "body": e.body,
		"html_url":   fmt.Sprintf("%s#issuecomment-%d", s.htmlURL(rp, it), e.id),
		"issue_url":  fmt.Sprintf("%s/api/v1/repos/%s/%s/issues/%d", s.baseURL, rp.owner, rp.name, it.number),
		"created_at": e.created.Format(time.RFC3339), "updated_at": e.updated.Format(time.RFC3339)}
}

func (s *Server) timelineJSON(rp *repo, it *issue, e *event) obj {
	o := s.commentJSON(rp, it, e)
	o["type"] = e.typ
	if e.typ == "label" {
		if l := s.labelByID(rp, e.labelID); l != nil {
			o["label"] = s.labelJSON(rp, l)
		}
	}
	return o
}

func (s *Server) repoJSON(rp *repo) obj {
	return obj{"id": rp.id, "name": rp.name, "full_name": rp.owner + "/" + rp.name, "owner": userJSON(rp.owner),
		"default_branch": rp.defaultBranch, "html_url": fmt.Sprintf("%s/%s/%s", s.baseURL, rp.owner, rp.name)}
}
