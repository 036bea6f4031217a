// Package reliability holds steward's reliability and security suite: the catalogue of
// bad and hostile input (testdata/hostile plus files made at test time), faults in every
// source (a held DB, a replaced DB, a removed locks directory, an exhausted inotify
// limit, a slow or failing Gitea, a full audit disk), a load run of the simulated fleet
// with a second steward process acting on the same workspace, fuzz targets, and checks
// that no token reaches a log, a record or a screen.
//
// It owns no production code: everything here is a test of the other packages, through
// their public APIs and the command line, as a user or an operator would meet them.
// docs/reliability.md lists every case, the behaviour expected and the test holding it.
//
// What it must never do: change a source except through the governed core (as steward
// does), sleep in place of synchronisation, or leave anything outside t.TempDir().
package reliability
