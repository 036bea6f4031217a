package gitea

import (
	"testing"
	"time"

	"steward/gitea/gitearec"
)

func ev(id int64, typ, who, body, label string) timelineEvent {
	e := timelineEvent{ID: id, Type: typ, Body: body, Created: time.Unix(id*60, 0).UTC()}
	e.User = &struct {
		Login string `json:"login"`
	}{Login: who}
	if label != "" {
		e.Label = &struct {
			Name string `json:"name"`
		}{Name: label}
	}
	return e
}

func TestChooseQuestion(t *testing.T) {
	t.Parallel()
	const m = "status:blocked-pending-clarification"
	base := []timelineEvent{
		ev(1, "comment", "w", "early", ""),
		ev(2, "comment", "w", "the question", ""),
		ev(3, "label", "w", "1", m),
		ev(4, "comment", "maint", "after label", ""),
	}
	cases := []struct {
		name      string
		evs       []timelineEvent
		claimant  string
		body      string
		wantID    int64
		wantRule  string
		wantAtSec int64
	}{
		{"before label", base, "", "", 2, gitearec.RuleBeforeLabel, 180},
		{"claimant wins", append(append([]timelineEvent{}, base...), ev(5, "comment", "w", "follow-up", "")), "W", "", 5, gitearec.RuleClaimant, 180},
		{"claimant silent falls back", base, "other", "", 2, gitearec.RuleBeforeLabel, 180},
		{"latest label add counts", append(append([]timelineEvent{}, base...), ev(5, "label", "m", "", m), ev(6, "comment", "w", "q2", ""), ev(7, "label", "w", "1", m)), "", "", 6, gitearec.RuleBeforeLabel, 420},
		{"other labels ignored", []timelineEvent{ev(1, "label", "w", "1", "other"), ev(2, "comment", "w", "q", "")}, "", "", 2, gitearec.RuleLastComment, 120},
		{"issue body", []timelineEvent{ev(1, "label", "w", "1", m), ev(2, "comment", "x", "later", "")}, "", "asked in body", 0, gitearec.RuleIssueBody, 60},
		{"nothing", nil, "", "", 0, gitearec.RuleNone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cl := gitearec.Clarification{Issue: gitearec.Issue{Body: tc.body, Author: "w"}, Rule: gitearec.RuleNone}
			chooseQuestion(&cl, tc.evs, []string{m}, tc.claimant)
			at := int64(0)
			if !cl.AskedAt.IsZero() {
				at = cl.AskedAt.Unix()
			}
			if cl.QuestionCommentID != tc.wantID || cl.Rule != tc.wantRule || at != tc.wantAtSec {
				t.Fatalf("got comment %d rule %s at %d; want %d %s %d", cl.QuestionCommentID, cl.Rule, cl.AskedAt.Unix(),
					tc.wantID, tc.wantRule, tc.wantAtSec)
			}
		})
	}
}
