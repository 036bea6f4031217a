package govern

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"steward/govern/actionid"
)

// answerComments counts the answers steward posted on item n.
func (f *fixture) answerComments(n int64) int {
	f.t.Helper()
	found, _, err := f.ws.Gitea.FindCommentWithMarker(context.Background(), n, "steward:answer")
	if err != nil {
		f.t.Fatal(err)
	}
	if found {
		return 1
	}
	return 0
}

// TestClarifyActsOnlyInTheConfiguredRepository: a clarification names its item by org, repo
// and number, and steward's Gitea login serves one repository. An item of another org or
// repository is refused invalid_request, naming the configured one, and nothing is posted —
// never the answer on the configured repository's item of the same number. An empty org or
// repository means the configured one, compared as Gitea does (case-insensitive, spaces
// trimmed). Number 0 names no item: refused invalid_request, not looked up.
func TestClarifyActsOnlyInTheConfiguredRepository(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	for _, c := range []struct {
		name      string
		org, repo string
		number    func(n int64) int64
		refused   string // a part of the refusal; "" when the answer is posted
	}{
		{name: "the configured repository", org: "acme", repo: "widgets"},
		{name: "org and repo left out", org: "", repo: ""},
		{name: "org left out", org: "", repo: "widgets"},
		{name: "repo left out", org: "acme", repo: ""},
		{name: "another spelling", org: " ACME ", repo: "Widgets"},
		{name: "another org", org: "other", repo: "widgets", refused: "the configured repository acme/widgets"},
		{name: "another org, repo left out", org: "other", repo: "", refused: "the configured repository acme/widgets"},
		{name: "another repo", org: "acme", repo: "gadgets", refused: "the configured repository acme/widgets"},
		{name: "another repo, org left out", org: "", repo: "gadgets", refused: "the configured repository acme/widgets"},
		{name: "number 0", org: "acme", repo: "widgets", number: func(int64) int64 { return 0 }, refused: "name the issue"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := f.markedIssue()
			num := n
			if c.number != nil {
				num = c.number(n)
			}
			it := &Item{Remote: "origin", Org: c.org, Repo: c.repo, Kind: "issue", Number: num}
			_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Answer, Target: Target{Item: it},
				Params: AnswerParams{Body: "Use the v2 API."}}, "")
			if err != nil {
				t.Fatal(err)
			}
			is, err := f.ws.Gitea.GetIssue(context.Background(), n)
			if err != nil {
				t.Fatal(err)
			}
			if c.refused != "" {
				if out.Result != ResultRefused || out.Code != CodeInvalidRequest || !strings.Contains(out.Message, c.refused) {
					t.Errorf("answer to %s: %s %s %q, want refused %s naming %q", it, out.Result, out.Code, out.Message,
						CodeInvalidRequest, c.refused)
				}
				if f.answerComments(n) != 0 || !is.HasLabel("status:blocked-pending-clarification") {
					t.Errorf("the refused answer changed acme/widgets#%d: labels %v", n, is.Labels)
				}
				return
			}
			if out.Result != ResultSucceeded {
				t.Fatalf("answer to %s: %+v", it, out)
			}
			if f.answerComments(n) != 1 || is.HasLabel("status:blocked-pending-clarification") {
				t.Errorf("the answer to %s did not land on acme/widgets#%d: labels %v", it, n, is.Labels)
			}
		})
	}
}

// TestClarifyOnAPullRequestReadsItsHead: a clarification of a pull request is fenced by its
// head, so it reads the head first. When the head cannot be read, asking or answering on a
// pull request is refused source_unavailable, naming the head — while on an issue, which has
// no head, neither needs it (nor names a head among its fences). Once the head reads, the
// answer's preview names it as a fence.
func TestClarifyOnAPullRequestReadsItsHead(t *testing.T) {
	for _, action := range []string{actionid.Ask, actionid.Answer} {
		for _, kind := range []string{"issue", "pr"} {
			t.Run(action+" on "+kind, func(t *testing.T) {
				f := newFixture(t, RoleOperator)
				f.withGitea()
				var n int64
				var sha string
				if kind == "pr" {
					sha = f.repo.CreateBranch("fix-api")
					n = f.repo.CreatePR("worker", "Use the v2 API", "fix-api", "main")
				} else {
					n = f.repo.CreateIssue("maint", "Which API?", "body")
				}
				it := &Item{Remote: "origin", Org: "acme", Repo: "widgets", Kind: kind, Number: n}
				req := Request{Action: action, Target: Target{Item: it}, Params: AnswerParams{Body: "Use the v2 API."}}
				if action == actionid.Ask {
					_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Claim,
						Target: Target{Item: it, Session: "s1"},
						Params: ClaimParams{PID: strconv.Itoa(os.Getpid()), Role: "author", Username: "bot-s1"}}, "")
					if err != nil || out.Result != ResultSucceeded {
						t.Fatalf("claim of %s: %+v %v", it, out, err)
					}
					req = Request{Action: actionid.Ask, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"},
						Params: AskParams{Question: "Which API?"}}
				} else {
					f.repo.AddComment("worker", n, "Should this use the v2 API?")
					f.repo.AddLabel("worker", n, "status:blocked-pending-clarification")
				}
				pulls := "/pulls/" + strconv.FormatInt(n, 10)
				f.fake.SetFault(func(r *http.Request) int {
					if strings.HasSuffix(r.URL.Path, pulls) {
						return http.StatusInternalServerError
					}
					return 0
				})
				before := f.state()
				pv, err := f.core.Preview(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if f.state() != before {
					t.Fatal("the preview wrote something")
				}
				if kind == "issue" {
					if !pv.Allowed {
						t.Fatalf("%s on an issue while pull requests cannot be read: %+v", action, pv.Refusal)
					}
					if fences := strings.Join(pv.Fences, "\n"); strings.Contains(fences, "head") {
						t.Errorf("the %s on an issue is fenced by a head: %q", action, pv.Fences)
					}
					return
				}
				if pv.Allowed || pv.Refusal == nil || pv.Refusal.Code != CodeSourceUnavailable ||
					!strings.Contains(pv.Refusal.Message, "head could not be read") {
					t.Fatalf("%s on a pull request whose head cannot be read: allowed %v, %+v; want refused %s naming the head",
						action, pv.Allowed, pv.Refusal, CodeSourceUnavailable)
				}
				f.fake.SetFault(nil)
				pv, err = f.core.Preview(context.Background(), req)
				if err != nil || !pv.Allowed {
					t.Fatalf("%s on a pull request whose head reads: %+v %v", action, pv.Refusal, err)
				}
				if action == actionid.Answer && !strings.Contains(strings.Join(pv.Fences, "\n"), "pull request head is still "+sha) {
					t.Errorf("the answer's fences do not name the head %s: %q", sha, pv.Fences)
				}
			})
		}
	}
}

// TestAnswerNamesTheMarkerRound: an answer is bound to the marker round it answers — the
// timeline event that last added the marker label — and its preview says which (a fence, and
// the evidence the intent records for its verification). An item whose timeline shows no
// such event names no round ("none"), never an event id Gitea does not have.
func TestAnswerNamesTheMarkerRound(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	ctx := context.Background()
	marked := f.markedIssue()
	f.repo.RemoveLabel("maint", marked, "status:blocked-pending-clarification")
	f.repo.AddLabel("worker", marked, "status:blocked-pending-clarification")
	th, err := f.ws.Gitea.Thread(ctx, marked)
	if err != nil {
		t.Fatal(err)
	}
	var round int64
	for _, e := range th.Labels {
		if e.Label == "status:blocked-pending-clarification" && e.Added {
			round = e.ID // the last addition: the timeline is oldest first
		}
	}
	if round <= 0 {
		t.Fatalf("no marker addition in the timeline of #%d: %+v", marked, th.Labels)
	}
	unmarked := f.repo.CreateIssue("maint", "plain", "body")
	f.repo.AddComment("worker", unmarked, "Should this use the v2 API?")
	for _, c := range []struct {
		n       int64
		round   string
		refused string
	}{
		{marked, strconv.FormatInt(round, 10), ""},
		{unmarked, "none", "not_marked"},
	} {
		pv, err := f.core.Preview(ctx, Request{Action: actionid.Answer, Target: Target{Item: item(c.n)},
			Params: AnswerParams{Body: "Use the v2 API."}})
		if err != nil {
			t.Fatal(err)
		}
		code := ""
		if pv.Refusal != nil {
			code = pv.Refusal.Code
		}
		if code != c.refused {
			t.Errorf("#%d: refusal %q, want %q", c.n, code, c.refused)
		}
		fence, ev := "asked in marker round "+c.round, "marker round "+c.round
		if !slices.ContainsFunc(pv.Fences, func(s string) bool { return strings.HasSuffix(s, fence) }) ||
			!slices.Contains(pv.Evidence, ev) {
			t.Errorf("#%d: fences %q and evidence %q, want the round %s", c.n, pv.Fences, pv.Evidence, c.round)
		}
	}
}

// TestAnswerToTheQuestionItRead: an answer may name the question comment its author read;
// when the item asks something else by then, the answer is refused question_changed and
// nothing is posted — but an answer to the question still asked lands. An item no longer
// marked is refused not_marked first, whatever question the answer names.
func TestAnswerToTheQuestionItRead(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	for _, c := range []struct {
		name    string
		marked  bool
		seen    func(question, earlier int64) string
		refused string
	}{
		{"names no question", true, func(_, _ int64) string { return "" }, ""},
		{"names the question still asked", true, func(q, _ int64) string { return strconv.FormatInt(q, 10) }, ""},
		{"names an earlier question", true, func(_, e int64) string { return strconv.FormatInt(e, 10) }, "question_changed"},
		{"names the issue body", true, func(_, _ int64) string { return "body" }, "question_changed"},
		{"unmarked, names an earlier question", false, func(_, e int64) string { return strconv.FormatInt(e, 10) },
			"not_marked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The worker asked, then asked again before marking the item: the question is the
			// last one.
			n := f.repo.CreateIssue("maint", "Which API?", "body")
			earlier := f.repo.AddComment("worker", n, "Should this use the v1 API?")
			q := f.repo.AddComment("worker", n, "Should this use the v2 API?")
			if c.marked {
				f.repo.AddLabel("worker", n, "status:blocked-pending-clarification")
			}
			_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Answer, Target: Target{Item: item(n)},
				Params: AnswerParams{Body: "Use the v2 API.", QuestionComment: c.seen(q, earlier)}}, "")
			if err != nil {
				t.Fatal(err)
			}
			want := ResultSucceeded
			if c.refused != "" {
				want = ResultRefused
			}
			if out.Result != want || out.Code != c.refused {
				t.Fatalf("answer naming question %q (asked: %d): %s %s %q, want %s %q", c.seen(q, earlier), q, out.Result, out.Code,
					out.Message, want, c.refused)
			}
			if posted := f.answerComments(n); posted != map[bool]int{true: 1, false: 0}[c.refused == ""] {
				t.Errorf("%d answers posted", posted)
			}
		})
	}
}

// TestClarifyTextAtItsLimit: a question or an answer of exactly maxBody bytes (64 KiB) is
// posted whole; the limit refuses only what is longer.
func TestClarifyTextAtItsLimit(t *testing.T) {
	text := strings.Repeat("x", maxBody)
	for _, action := range []string{actionid.Ask, actionid.Answer} {
		t.Run(action, func(t *testing.T) {
			f := newFixture(t, RoleOperator)
			f.withGitea()
			var req Request
			var n int64
			if action == actionid.Ask {
				n = f.repo.CreateIssue("maint", "unclear", "body")
				out := f.claim("s1", n)
				req = Request{Action: actionid.Ask, Target: Target{LeaseID: out.Detail["lease_id"], Session: "s1"},
					Params: AskParams{Question: text}}
			} else {
				n = f.markedIssue()
				req = Request{Action: actionid.Answer, Target: Target{Item: item(n)}, Params: AnswerParams{Body: text}}
			}
			_, out, err := f.core.Run(context.Background(), req, "")
			if err != nil || out.Result != ResultSucceeded {
				t.Fatalf("%s of %d bytes: %s %s %q %v", action, len(text), out.Result, out.Code, out.Message, err)
			}
			th, err := f.ws.Gitea.Thread(context.Background(), n)
			if err != nil {
				t.Fatal(err)
			}
			whole := false
			for _, c := range th.Comments {
				whole = whole || strings.HasPrefix(c.Body, text)
			}
			if !whole {
				t.Errorf("no comment on #%d carries the %d bytes whole", n, len(text))
			}
		})
	}
}

// TestAskAnswersWithItsClarification: a worker's question, once posted, labelled and its
// claim released, answers with what the worker polls by — the clarification id its question
// comment carries, that comment's id, the marker label — and with what its release did (the
// lease released, its lock archived).
func TestAskAnswersWithItsClarification(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	n := f.repo.CreateIssue("maint", "unclear", "body")
	lease := f.claim("s1", n).Detail["lease_id"]
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Ask, Target: Target{LeaseID: lease, Session: "s1"},
		Params: AskParams{Question: "Which API?"}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("ask: %+v %v", out, err)
	}
	id := out.Detail["clarification_id"]
	found, c, err := f.ws.Gitea.FindCommentWithMarker(context.Background(), n, askMarker(id))
	if id == "" || err != nil || !found || strconv.FormatInt(c.ID, 10) != out.Detail["question_comment_id"] {
		t.Errorf("detail %v: the question comment carrying clarification %q: found %v %+v %v", out.Detail, id, found, c, err)
	}
	if out.Detail["marker_label"] != "status:blocked-pending-clarification" || out.Detail["lease_id"] != lease ||
		out.Detail["archived_as"] == "" {
		t.Errorf("detail %v: want the marker label, lease %s and where its lock was archived", out.Detail, lease)
	}
	if len(out.Effects) < 2 || !strings.HasPrefix(out.Effects[0], "question posted on") {
		t.Errorf("effects %q", out.Effects)
	}
}

// TestRelabelRefusesAMarkerAlreadyOn: re-adding a clarification marker the item carries
// already changes nothing: refused nothing_to_do, and nothing is added.
func TestRelabelRefusesAMarkerAlreadyOn(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	n := f.markedIssue()
	before, err := f.ws.Gitea.Thread(context.Background(), n)
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := f.core.Run(context.Background(), Request{Action: actionid.Relabel, Target: Target{Item: item(n)},
		Params: RelabelParams{Label: "status:blocked-pending-clarification"}}, "")
	if err != nil || out.Result != ResultRefused || out.Code != "nothing_to_do" {
		t.Fatalf("relabel of a marker already on: %+v %v, want refused nothing_to_do", out, err)
	}
	after, err := f.ws.Gitea.Thread(context.Background(), n)
	if err != nil || len(after.Labels) != len(before.Labels) {
		t.Errorf("label events %d before, %d after %v", len(before.Labels), len(after.Labels), err)
	}
}

// TestVerifyRelabel: an interrupted relabel is settled from the item's label events: an
// addition of the marker by steward's own login after the last label event its preview saw
// proves it succeeded; an addition its preview had seen already, or of another label,
// proves nothing — it failed.
func TestVerifyRelabel(t *testing.T) {
	f := newFixture(t, RoleOperator)
	f.withGitea()
	ctx := context.Background()
	const marker = "status:blocked-pending-clarification"
	f.repo.CreateLabel("triage", "ffffff")
	n := f.repo.CreateIssue("maint", "Which API?", "body")
	f.repo.AddComment("worker", n, "Should this use the v2 API?")
	f.repo.AddLabel("worker", n, marker)
	if _, out, err := f.core.Run(ctx, Request{Action: actionid.Answer, Target: Target{Item: item(n)},
		Params: AnswerParams{Body: "Use the v2 API."}}, ""); err != nil || out.Result != ResultSucceeded {
		t.Fatalf("answer: %+v %v", out, err)
	}
	_, out, err := f.core.Run(ctx, Request{Action: actionid.Relabel, Target: Target{Item: item(n)},
		Params: RelabelParams{Label: marker}}, "")
	if err != nil || out.Result != ResultSucceeded {
		t.Fatalf("relabel: %+v %v", out, err)
	}
	var intent Record
	for _, r := range f.records() {
		if r.Attempt == out.Attempt && r.Kind == KindIntent {
			intent = r
		}
	}
	th, err := f.ws.Gitea.Thread(ctx, n)
	if err != nil || len(th.Labels) == 0 {
		t.Fatalf("label events %+v %v", th.Labels, err)
	}
	added := th.Labels[len(th.Labels)-1].ID // the relabel's own addition
	seen := func(since int64, label string) Record {
		r := intent
		r.Attempt, r.Evidence = "att-"+strconv.FormatInt(since, 10)+label, []string{lastLabelEvent +
			strconv.FormatInt(since, 10), relabelEvidence + label}
		return r
	}
	f.repo.AddLabel("maint", n, "triage") // steward's login adds another label later
	for _, c := range []struct {
		name   string
		intent Record
		want   Result
	}{
		{"the relabel that added the marker", intent, ResultSucceeded},
		{"a relabel whose preview saw that addition", seen(added, marker), ResultFailed},
		{"a relabel of a label nobody added after its preview", seen(added, "status:needs-info"), ResultFailed},
	} {
		res, ev, ok := relabel{}.verify(ctx, f.core, c.intent)
		if !ok || res != c.want {
			t.Errorf("%s: %s %v settled=%v, want %s", c.name, res, ev, ok, c.want)
		}
	}
}
