// Package reponame owns the one rule that maps a repository's spelling to an item: which
// owner and repository names name the same Gitea repository, which are refused, and what
// each refusal says. Every door that takes a typed name — the command line's --org, --repo
// and --item, the MCP tools' arguments, the workbench's requests, and the governed core's
// claim as the last line — asks it; the readers ask it which recorded spellings to show as
// a finding.
//
// The rule is Gitea's own (code.gitea.io/gitea v1.26.0):
//   - Owner and repository names are matched case-insensitively (Gitea looks a repository
//     up by lower_name): Widgets and widgets are one repository. The spelling is kept as
//     given; Identity folds it for comparison.
//   - A repository name that ends in ".git" names the repository without it, as a clone
//     path does (routers/web/repo/githttp.go trims one ".git"): widgets.git is widgets.
//     Repo removes that one suffix.
//   - A repository name is otherwise what Gitea accepts when one is created
//     (models/repo.IsUsableRepoName, MaxSize(100)): ASCII letters, digits, '-', '_' and
//     '.', no "..", not ".", ".." or "-", not ending in .git, .wiki, .rss or .atom, at most
//     100 bytes. So widgets. (a trailing dot) is a name of its own, the repository Gitea
//     would create under it, never widgets.
//   - An owner name is what Gitea accepts for a user or an organisation
//     (modules/validation.IsValidUsername, MaxSize(40)): an ASCII letter or digit, then
//     letters, digits, '-', '_' and '.', no two of '-', '_', '.' in a row, none last.
//
// Everything else is refused with an error that says why and what to write instead: a
// path (./widgets, widgets/), full-width or other non-ASCII letters (ｗｉｄｇｅｔｓ), spaces,
// control characters. Nothing is guessed: a refused spelling never becomes another item.
//
// It must never do IO, read a clock or import another steward package: it is a pure leaf
// (TestPureByStructure in arch_test.go).
package reponame
