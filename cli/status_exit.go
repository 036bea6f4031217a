package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"steward/govern"
	"steward/model"
	"steward/termsafe"
)

// The exit codes of `steward status` besides ExitOK (every configured source was read) and
// ExitError (the command could not run).
const (
	// ExitSourceUnavailable: a configured source (the lock directory, the DB, Gitea when a
	// repository is configured) could not be read, so nothing can be concluded from it. It
	// wins over exitAttention: the picture --fail-on would judge is incomplete.
	ExitSourceUnavailable = 5
	// exitAttention: --fail-on found what it names.
	exitAttention = 6
)

// failOn is --fail-on: what makes `steward status` exit exitAttention.
type failOn string

// The values of --fail-on.
const (
	failOnNone  failOn = ""
	failOnHuman failOn = failOn(model.NeedHuman)
	// failOnAttention is everything the workbench's attention inbox lists: human-required
	// and operator.
	failOnAttention failOn = "attention"
)

func (f *failOn) String() string { return string(*f) }

func (f *failOn) Set(s string) error {
	switch v := failOn(strings.TrimSpace(s)); v {
	case failOnHuman, failOnAttention:
		*f = v
		return nil
	}
	return fmt.Errorf(
		"want human-required (collisions, questions waiting, unavailable sources, unknown outcomes) or attention (those " +
			"and orphans an operator can reconcile)",
	)
}

func (f *failOn) Type() string { return "need" }

// unsettled lists the attempts of steward's audit log at path whose outcome is unknown and
// unresolved, as findings — they need a person (`steward audit verify`), as in the
// workbench's inbox. The log is only read. A missing log holds none; an unreadable one is
// a finding of its own.
func unsettled(path string) (notes []string, n int) {
	recs, _, err := govern.ReadAudit(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, 0
	case err != nil:
		return []string{
			"steward's audit log " + path + " could not be read (" + err.Error() + "): attempts of unknown outcome are not " +
				"counted",
		}, 0
	}
	for _, a := range govern.Attempts(recs) {
		if !a.Unresolved() {
			continue
		}
		action := ""
		if r := a.Intent; r != nil {
			action = r.Action
		} else if r := a.Outcome; r != nil {
			action = r.Action
		}
		notes = append(
			notes,
			"unknown outcome of "+action+" (attempt "+a.ID+"): it may have taken effect — verify before retrying (steward "+
				"audit verify)",
		)
		n++
	}
	return notes, n
}

// withNotes returns s with notes added to its findings; s itself is never changed (a
// published snapshot is immutable).
func withNotes(s *model.Snapshot, notes []string) *model.Snapshot {
	if len(notes) == 0 {
		return s
	}
	cp := *s
	cp.Findings = append(append([]string(nil), s.Findings...), notes...)
	return &cp
}

// statusVerdict is the exit code of a status snapshot and the line that says why on
// stderr ("" for ExitOK). unknown counts the audit log's unsettled attempts.
func statusVerdict(s *model.Snapshot, unknown int, fail failOn) (int, string) {
	var down []string
	for _, x := range []struct {
		name string
		h    model.SourceHealth
	}{{"locks", s.Sources.Locks}, {"db", s.Sources.DB}, {"gitea", s.Sources.Gitea}} {
		if x.h.Status == model.StatusUnavailable {
			why := ""
			if x.h.Reason != "" {
				why = " (" + termsafe.Line(x.h.Reason) + ")"
			}
			down = append(down, x.name+why)
		}
	}
	if len(down) > 0 {
		return ExitSourceUnavailable, fmt.Sprintf(
			"steward status: unavailable: %s; nothing can be concluded from it (exit %d)",
			strings.Join(down, ", "),
			ExitSourceUnavailable,
		)
	}
	human, oper := s.Needs()
	human += unknown
	switch {
	case fail == failOnHuman && human > 0:
		return exitAttention, fmt.Sprintf(
			"steward status: %d human-required (--fail-on human-required, exit %d)",
			human,
			exitAttention,
		)
	case fail == failOnAttention && human+oper > 0:
		return exitAttention, fmt.Sprintf(
			"steward status: %d human-required, %d operator (--fail-on attention, exit %d)",
			human,
			oper,
			exitAttention,
		)
	}
	return ExitOK, ""
}

// statusExit is the command's result for a verdict: Main prints msg on stderr.
func statusExit(code int, msg string) error {
	if code == ExitOK {
		return nil
	}
	return &exitError{code: code, msg: msg}
}
