// Package cli is steward's command line: cobra commands that build requests for the governed
// core, print its previews and outcomes, and map them to exit codes (0 done, 3 refused,
// 4 unknown outcome, 1 error). It holds no logic of its own: every action is the core's.
package cli
