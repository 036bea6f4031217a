// Package giteatest runs a real Gitea server on loopback for tests, built once by
// .ci/build-gitea and cached outside the repository, plus a TCP fault proxy to put in front of
// it.
//
// One server per test binary: call Shared from tests and wrap TestMain with Main so the
// server is stopped at the end. Each test makes its own repository with NewRepo, so tests do not
// see each other's items. In CI (CI set) a failed build or start fails the test; locally
// STEWARD_SKIP_REAL_GITEA=1 skips instead.
//
// It must never bind anything but 127.0.0.1 and never touch files outside its temporary
// directory and the build cache.
package giteatest
