// Package pgproxy is a loopback TCP proxy in front of a PostgreSQL server that cuts one
// client connection at a chosen statement, for the tests of what a lost connection does to
// a governed write. It reads the frontend side of the wire protocol (the startup packet,
// then typed messages: a simple Query, or Parse/Bind/Execute/Sync of the extended protocol)
// and logs every statement each connection executes, in order, with whether its
// transaction had already sent a write; the server's side is relayed byte for byte.
//
// A Cut names one statement (a Match and its N-th occurrence) and what happens there:
// Before closes the connection instead of forwarding it; ReplyLost forwards it (through
// its Sync) and closes the client side without relaying any answer, so the server may
// process it and commit while the client sees only a broken connection; Hold closes the
// client side at once but keeps the statement until the test releases it, so a test can
// look at the world while the server still has the transaction open and the COMMIT is
// on its way. After a cut the proxy half-closes its connection to the server and reads
// it to the end: Done is closed once the server has ended that connection's session,
// which is what a test waits for before it reads back what was committed.
//
// It never changes a byte it forwards, holds no credential (trust authentication on
// loopback; a password message would pass through unread) and is for tests only.
package pgproxy
