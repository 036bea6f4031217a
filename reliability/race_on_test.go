//go:build race

package reliability_test

// raceEnabled reports whether the test binary runs under the race detector.
const raceEnabled = true
