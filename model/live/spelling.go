package live

import (
	"errors"
	"fmt"
	"strconv"

	"steward/leases/leaserec"
	"steward/locks/lockrec"
	"steward/reponame"
)

// maxSpellingFindings bounds the findings of one source's spellings: a hostile source with
// thousands of them says how many more there are instead of listing each.
const maxSpellingFindings = 20

// spellingFinding says what a record naming org/repo#n is when its spelling is not the one
// reponame gives (Gitea's rule: a clone path's ".git" removed; a name Gitea would not accept
// refused), "" when it is. Such a record is shown as it is recorded — never merged into the
// item of the canonical spelling, never taken for free because it is spelled otherwise.
func spellingFinding(what, org, repo string, n int64) string {
	if reponame.IsCanonical(org, repo) {
		return ""
	}
	o, r, err := reponame.Canonical(org, repo)
	if err != nil {
		why := err.Error()
		var e *reponame.Error
		if errors.As(err, &e) {
			why = e.Part + " " + strconv.QuoteToASCII(clip(e.Value)) + ": " + e.Why
		}
		return fmt.Sprintf(
			"%s names %s/%s#%d, not a spelling Gitea accepts (%s): shown as recorded, never taken for another item; recover "+
				"it from the workbench or by its lock file",
			what,
			strconv.QuoteToASCII(clip(org)),
			strconv.QuoteToASCII(clip(repo)),
			n,
			why,
		)
	}
	return fmt.Sprintf(
		"%s names %s/%s#%d, the clone-path spelling of %s/%s#%d (the same repository): shown as recorded, not merged; a "+
			"claim of %s/%s#%d is refused while it is held",
		what,
		org,
		repo,
		n,
		o,
		r,
		n,
		o,
		r,
		n,
	)
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// spellingFindings collects the findings of a source's records, at most
// maxSpellingFindings and a count of the rest.
type spellingFindings struct {
	out  []string
	more int
}

func (s *spellingFindings) add(f string) {
	switch {
	case f == "":
	case len(s.out) < maxSpellingFindings:
		s.out = append(s.out, f)
	default:
		s.more++
	}
}

func (s *spellingFindings) list(source string) []string {
	if s.more > 0 {
		return append(
			s.out,
			fmt.Sprintf("%d more %s records name their item in a spelling that is not Gitea's", s.more, source),
		)
	}
	return s.out
}

// lockSpelling is the finding of a lock entry's spelling ("" when canonical or unnamed).
func lockSpelling(e lockrec.Entry) string {
	if e.Unreadable != nil || !e.HasKey {
		return ""
	}
	return spellingFinding("lock "+e.Name, e.Key.Org, e.Key.Repo, e.Key.Issue)
}

// workItemSpellings are the findings of the DB's work items' spellings.
func workItemSpellings(items []leaserec.WorkItem) []string {
	var s spellingFindings
	for _, w := range items {
		s.add(spellingFinding("control-plane DB work item "+strconv.FormatInt(w.WorkItemID, 10), w.Org, w.Repo, w.Number))
	}
	return s.list("work_items")
}
