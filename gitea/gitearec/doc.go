// Package gitearec is the pure part of package gitea: what steward reads from Gitea and
// writes into a comment, with no server, SDK, token or clock behind it.
//
// What it owns:
//
//   - the records of an item as gitea reads them: Issue (with its Kind), Comment,
//     PullRequest, LabelEvent, Thread (one item read back whole) and Clarification (an
//     item marked for clarification with its question and the Rule that chose it);
//   - the labels steward looks for by default (DefaultMarkerLabels, DefaultBlockedLabel);
//   - Mark, the hidden marker steward ends every comment it posts with: its rendering
//     (String, AnswerMarker, WithMarker) and TrailingMark, the strict parser of a
//     comment's last line (comments are written by anyone: it never panics);
//   - Thread.FindOwnMark, the one rule for which comment is evidence of what steward
//     posted;
//
// so that the model and history take what gitea read without importing the client and the
// Gitea SDK behind it.
//
// What it must never do: import anything but the standard library's packages that do no
// IO (arch_test.go, TestPureByStructure) — the Gitea SDK least of all; hold or show a
// token; read a clock. Talking to Gitea is package gitea's.
package gitearec
