// Package tui is steward's workbench: a Bubble Tea v2 program that draws the live snapshot of
// the supervised system and lets a person act on it through the governed core.
//
// It owns the screen and nothing else. It does no IO outside a tea.Cmd (previews, applies,
// refreshes and audit reads all run in commands whose closures capture values, never the
// model), and it writes nothing itself: every change is a govern.Request that the root model
// turns into a command calling govern.Core. Pages and dialogs return intents (confirm, cancel,
// answer); only the root calls the core. Outside events enter through one bridge, SnapshotMsg,
// sent with tea.Program.Send by whoever owns the program (Run does it for a SnapshotSource).
//
// Every string that comes from a source passes through termsafe before it is drawn, and every
// cell is cut to its width with an ellipsis; Markdown passes through termsafe before and
// after glamour renders it (renderMarkdown), and no view draws a hyperlink built from
// external text. Text a person types is kept as typed and drawn rune by rune. Results of commands carry their owner
// and a
// generation, so a late answer for a closed dialog is dropped instead of applied.
//
// A workbench over several workspaces (RunWorkspaces, workspaces.go) is one Root per
// workspace, each with its own core, feed and audit log, and an "all" Root with no core that
// draws every workspace's rows under a Workspace column and acts on nothing; each command a
// Root returns is wrapped so that its answer comes back to that Root alone.
//
// Nothing imports tui but the command line.
package tui
