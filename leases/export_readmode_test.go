package leases

// TestingAllowForeignWriters undoes OnlyOwnWriters, for the tests that declare it for a
// while in a test binary whose other tests write through connections of their own.
func TestingAllowForeignWriters() { onlyOwnWriters.Store(false) }
