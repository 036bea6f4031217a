package lockrec

import "strings"

// Item identity. Gitea owner and repository names are case-insensitive, and a lock file's
// name is only steward's convention (the contract allows others): a lock belongs to the
// item its record names, compared by Identity — the remote as written, the org and repo
// folded (trimmed, lower-cased: the rule leaserec.Fold applies to the DB's columns), the
// issue number.

// Fold is the folding Identity applies to org and repo names.
func Fold(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Identity returns k with its org and repo folded: two keys name one item exactly when
// their identities are equal.
func (k Key) Identity() Key {
	return Key{Remote: strings.TrimSpace(k.Remote), Org: Fold(k.Org), Repo: Fold(k.Repo), Issue: k.Issue}
}

// SameItem reports whether a and b name the same item.
func SameItem(a, b Key) bool { return a.Identity() == b.Identity() }
