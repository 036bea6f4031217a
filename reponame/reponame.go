package reponame

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The limits Gitea's forms put on the names (services/forms: RepoName MaxSize(100),
// UserName MaxSize(40)).
const (
	maxRepo  = 100
	maxOwner = 40
)

// gitSuffix is the suffix a clone path may add to a repository's name.
const gitSuffix = ".git"

// reservedSuffixes are the endings Gitea refuses in a repository's name (compared in lower
// case); reservedNames the names it refuses whole.
var (
	reservedSuffixes = []string{".git", ".wiki", ".rss", ".atom"}
	reservedNames    = []string{".", "..", "-"}
)

// Error is a refused spelling: which part (owner or repository), the value, and why.
type Error struct {
	Part  string // "owner" or "repository"
	Value string
	Why   string
}

func (e *Error) Error() string {
	return e.Part + " name " + quote(e.Value) + " is not one Gitea accepts: " + e.Why
}

// quote quotes v for an error, cut to 60 runes so an oversized value stays readable.
func quote(v string) string {
	if utf8.RuneCountInString(v) > 60 {
		r := []rune(v)
		v = string(r[:60]) + "…"
	}
	return strconv.QuoteToASCII(v)
}

// Repo returns the canonical spelling of a repository name: the name as given without the
// one ".git" a clone path adds. err is non-nil (an *Error) when Gitea would not accept the
// name.
func Repo(name string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &Error{Part: "repository", Value: name, Why: why}
	}
	if name == "" {
		return bad("it is empty; give the repository's name, such as widgets")
	}
	if strings.ContainsAny(name, `/\`) {
		return bad("it is a path; give the repository's name alone" + suggestPath(name))
	}
	n := strings.TrimSuffix(name, gitSuffix)
	if n == "" {
		return bad("it is only a .git suffix; give the repository's name, such as widgets")
	}
	if why := chars(n); why != "" {
		return bad(why)
	}
	if len(n) > maxRepo {
		return bad("it is " + strconv.Itoa(len(n)) + " bytes; Gitea accepts at most " + strconv.Itoa(maxRepo))
	}
	if strings.Contains(n, "..") {
		return bad(`it holds "..", which Gitea refuses in a name`)
	}
	lower := strings.ToLower(n)
	for _, r := range reservedNames {
		if lower == r {
			return bad("Gitea reserves it")
		}
	}
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(lower, s) {
			return bad("Gitea refuses a name that ends in " + s + " (only one .git is taken as a clone path's suffix)")
		}
	}
	return n, nil
}

// Owner checks an owner's (a user's or an organisation's) name; err is non-nil (an
// *Error) when Gitea would not accept it. The name is its own canonical spelling.
func Owner(name string) error {
	bad := func(why string) error { return &Error{Part: "owner", Value: name, Why: why} }
	if name == "" {
		return bad("it is empty; give the user or organisation, such as acme")
	}
	if strings.ContainsAny(name, `/\`) {
		return bad("it is a path; give the owner's name alone" + suggestPath(name))
	}
	if why := chars(name); why != "" {
		return bad(why)
	}
	if len(name) > maxOwner {
		return bad("it is " + strconv.Itoa(len(name)) + " bytes; Gitea accepts at most " + strconv.Itoa(maxOwner))
	}
	if !alnum(name[0]) {
		return bad("it must start with a letter or a digit")
	}
	if special(name[len(name)-1]) {
		return bad("it must not end in '-', '_' or '.'")
	}
	for i := 1; i < len(name); i++ {
		if special(name[i]) && special(name[i-1]) {
			return bad("it must not hold two of '-', '_', '.' in a row")
		}
	}
	return nil
}

// Canonical checks an owner and a repository name together and returns the repository's
// canonical spelling (Repo); the owner is returned as given.
func Canonical(owner, repo string) (string, string, error) {
	if err := Owner(owner); err != nil {
		return "", "", err
	}
	r, err := Repo(repo)
	if err != nil {
		return "", "", err
	}
	return owner, r, nil
}

// IsCanonical reports whether owner and repo are spelled as Canonical returns them: names
// Gitea accepts, the repository without a ".git". A recorded spelling that is not is shown
// as a finding by the readers, never merged into another item or split from it silently.
func IsCanonical(owner, repo string) bool {
	o, r, err := Canonical(owner, repo)
	return err == nil && o == owner && r == repo
}

// fold is the comparison form of a canonical name: Gitea matches names in lower case.
func fold(name string) string { return strings.ToLower(name) }

// SameRepo reports whether two spellings name one repository: both accepted, equal once
// canonical and folded. A refused spelling names no repository, so it is never the same as
// another.
func SameRepo(owner1, repo1, owner2, repo2 string) bool {
	o1, r1, err1 := Canonical(owner1, repo1)
	o2, r2, err2 := Canonical(owner2, repo2)
	return err1 == nil && err2 == nil && fold(o1) == fold(o2) && fold(r1) == fold(r2)
}

// chars says why s holds a character Gitea refuses in a name ("" when none): Gitea's
// names are ASCII letters, digits, '-', '_' and '.'. A name in full-width letters is told
// the ASCII spelling it resembles, but never taken for it: Gitea does not fold it.
func chars(s string) string {
	if !utf8.ValidString(s) {
		return "it is not valid UTF-8"
	}
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf && (alnum(byte(r)) || special(byte(r))):
		case r >= 0xFF01 && r <= 0xFF5E:
			return "it holds full-width characters (" + quote(
				string(r),
			) + "); Gitea's names are ASCII letters, digits, '-', '_' and '.'" + suggestWidth(
				s,
			)
		case r == ' ' || r == '\t':
			return "it holds a space; Gitea's names are ASCII letters, digits, '-', '_' and '.'"
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xA0):
			return "it holds a control character; Gitea's names are ASCII letters, digits, '-', '_' and '.'"
		default:
			return "it holds " + quote(string(r)) + "; Gitea's names are ASCII letters, digits, '-', '_' and '.'"
		}
	}
	return ""
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }

func special(c byte) bool { return c == '-' || c == '_' || c == '.' }

// suggestWidth names the ASCII spelling of a name written in full-width forms, when every
// character has one that Gitea accepts.
func suggestWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 0xFF01 && r <= 0xFF5E {
			r -= 0xFEE0
		}
		if r >= utf8.RuneSelf || !(alnum(byte(r)) || special(byte(r))) {
			return ""
		}
		b.WriteRune(r)
	}
	return " (write " + quote(b.String()) + " if that is the repository meant)"
}

// suggestPath names the last element of a path, when it is a name on its own.
func suggestPath(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' })
	if len(parts) == 0 {
		return ""
	}
	last := parts[len(parts)-1]
	if chars(last) != "" || last == "." || last == ".." {
		return ""
	}
	return " (" + quote(last) + "?)"
}
