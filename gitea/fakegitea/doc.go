// Package fakegitea is an in-process subset of the Gitea API: exactly the endpoints steward's
// gitea client calls, with Gitea's JSON shapes, pagination headers (Link, X-Total-Count) and
// quirks (unknown label names are dropped from an issue filter; issue comments ignore page and
// limit). It serves `steward demo` on a machine without Gitea and the tests; the contract suite
// in gitea/contract runs the same assertions against it and a real Gitea to keep it honest.
//
// Seeding helpers on Repo (CreateIssue, AddLabel, AddComment, CreatePR, MergePR, CloseIssue, ...)
// change state directly. Everything is guarded by one mutex; the handler is safe for concurrent
// use. It never listens on anything itself: wrap it in httptest.NewServer or a loopback
// listener.
package fakegitea
