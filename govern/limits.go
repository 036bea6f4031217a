package govern

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ArgLimit is the size limit of one free-text argument of the governed actions: a request
// parameter, or a target field (Name "target.<field>").
type ArgLimit struct {
	Name string `json:"name"`
	// Max is the most bytes the argument may hold (its UTF-8 length, before any trimming).
	Max int `json:"max_bytes"`
	// What says what the argument is, for the refusal and the docs.
	What string `json:"what"`
}

// CodeTooLarge refuses a request one of whose arguments is longer than its limit.
const CodeTooLarge = "too_large"

// argLimits is the one table of the size limits of every argument of every action, for
// every surface (command line, MCP, workbench, simulator): Preview and Apply check a request
// against it before an action reads anything, so an oversized argument is refused before
// anything is written. A parameter the table does not name is refused too: no action reads
// it, and an unknown name is a mistake, never something to carry along.
//
// The limits are generous for what each argument is, and small enough that a claim whose
// every argument is at its limit — with every byte a control character, which the lock
// encoder writes as six — still writes a lock file well under the 1 MiB steward reads
// (locks.MaxFileSize; TestClaimAtEveryLimitWritesAReadableLock). Questions and answers keep
// the 64 KiB they had.
var argLimits = []ArgLimit{
	{"target.session", 200, "a worker session id"},
	{"target.lease_id", 256, "a lease id"},
	{"target.lock_file", 4096, "a lock file's name in the locks directory"},
	{"target.attempt", 128, "an audit attempt id"},
	{"target.entry", 2048, "an attention entry's key"},
	{"target.item.remote", 255, "a git remote name"},
	{"target.item.org", 255, "a repository owner"},
	{"target.item.repo", 255, "a repository name"},
	{"target.item.kind", 16, "issue or pr"},
	{"role", 32, "a worker's task role"},
	{"profile", 256, "a worker profile"},
	{"username", 256, "a claimant's Gitea username"},
	{"pid", 20, "a process id"},
	{"ttl", 64, "a lease TTL (Go duration)"},
	{"branch", 1024, "a branch name"},
	{"worktree", 4096, "a worktree path"},
	{"title", 1024, "an item's title"},
	{"question", maxBody, "a question for a maintainer (Markdown)"},
	{"body", maxBody, "a maintainer's answer (Markdown)"},
	{"question_comment", 32, "the id of the question's comment"},
	{"label", 255, "a Gitea label name"},
	{"evidence", 256, "an attention entry's evidence fingerprint"},
	{"level", 8, "an attention level"},
	{"for", 64, "a snooze's length (Go duration)"},
	{"expect_expires_at", 64, "the lease expiry the worker holds"},
	{"expect_lock_generation", 20, "the lock generation the worker holds"},
	{"expect_task_session_id", 256, "the task_session_id the worker holds"},
	{"expect_lease_generation", 20, "the lease generation the worker holds"},
	{"caller_pid", 20, "the process a worker's call comes from"},
	{"claim_token", 128, "a claim token (secret)"},
}

// ArgLimits returns the table of argument size limits, in its order (targets first).
func ArgLimits() []ArgLimit { return slices.Clone(argLimits) }

// LimitOf returns the size limit of the parameter or target field named name.
func LimitOf(name string) (ArgLimit, bool) {
	i := slices.IndexFunc(argLimits, func(l ArgLimit) bool { return l.Name == name })
	if i < 0 {
		return ArgLimit{}, false
	}
	return argLimits[i], true
}

// targetFields are the target's free-text fields by their table names.
func targetFields(t Target) [][2]string {
	f := [][2]string{{"target.session", t.Session}, {"target.lease_id", t.LeaseID}, {"target.lock_file", t.LockFile},
		{"target.attempt", t.Attempt}, {"target.entry", t.Entry}}
	if it := t.Item; it != nil {
		f = append(f, [2]string{"target.item.remote", it.Remote}, [2]string{"target.item.org", it.Org},
			[2]string{"target.item.repo", it.Repo}, [2]string{"target.item.kind", it.Kind})
	}
	return f
}

// checkArgs refuses a request with an argument over its limit (too_large) or a parameter
// no action takes (invalid_request). It reads only the request.
func checkArgs(req Request) *Refusal {
	for _, f := range targetFields(req.Target) {
		if r := overLimit(f[0], f[1]); r != nil {
			return r
		}
	}
	if r := checkParams(req); r != nil {
		return r
	}
	for _, p := range pairs(req.Params) {
		if r := overLimit(p.name, p.value); r != nil {
			return r
		}
	}
	return nil
}

func overLimit(name, v string) *Refusal {
	l, ok := LimitOf(name)
	if !ok || len(v) <= l.Max {
		return nil
	}
	return refuse(
		CodeTooLarge,
		fmt.Sprintf("%s is %d bytes; at most %d are accepted (%s). Nothing was changed: shorten it and try again.",
			strings.TrimPrefix(name, "target."), len(v), l.Max, l.What),
	)
}

// clipTarget cuts every target field over its limit, for the audit record of a request
// refused too_large: the record names what was asked without carrying the oversized text.
func clipTarget(t Target) Target {
	cut := func(name string, v *string) {
		if l, ok := LimitOf(name); ok && len(*v) > l.Max {
			n := l.Max
			for n > 0 && !utf8.RuneStart((*v)[n]) {
				n--
			}
			*v = (*v)[:n] + "…"
		}
	}
	cut("target.session", &t.Session)
	cut("target.lease_id", &t.LeaseID)
	cut("target.lock_file", &t.LockFile)
	cut("target.attempt", &t.Attempt)
	cut("target.entry", &t.Entry)
	if t.Item != nil {
		it := *t.Item
		cut("target.item.remote", &it.Remote)
		cut("target.item.org", &it.Org)
		cut("target.item.repo", &it.Repo)
		cut("target.item.kind", &it.Kind)
		t.Item = &it
	}
	return t
}
