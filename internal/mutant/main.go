// Command mutant is the test-selection layer of scripts/mutation. gremlins
// (github.com/go-gremlins/gremlins) finds the mutants, applies each in a copy of the
// module and judges it by the exit code of the go command it runs; scripts/mutation puts
// this program first on gremlins' PATH under the name "go", so that:
//
//   - gremlins' coverage step (go test -cover -coverprofile F ./pkg/...) builds a
//     per-test coverage map instead: every test of the judging packages run alone
//     (a slow one split into its subtests) with -coverpkg on the target package, and
//     writes the union of what they cover to F — gremlins then counts a mutant covered
//     when any judging test reaches it, the contract suite's included;
//   - gremlins' mutant step (go test -failfast pkg, in its copy) runs only the tests
//     that reach the mutated line, fastest first, stopping at the first failure: exit
//     1 killed, 2 not viable (it did not compile), 0 lived; a run past its own deadline
//     is logged as timed out (the report counts it so, never as killed);
//   - every other go command goes to the real go unchanged.
//
// It also writes the report (mutant report): the figures per package and every
// survivor, checked against the equivalent mutants listed in docs/mutation.md.
//
// It is a tool of the test suite: it never changes the source tree (gremlins mutates
// its own copies) and holds no logic of steward's.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func main() {
	if filepath.Base(os.Args[0]) == "go" {
		os.Exit(shim(os.Args[1:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "report" {
		os.Exit(report(os.Args[2:]))
	}
	fmt.Fprintln(
		os.Stderr,
		"usage: mutant report [flags] (or installed as \"go\" on gremlins' PATH by scripts/mutation)",
	)
	os.Exit(2)
}

// exitInfra is the exit code of a failure of this tool itself: gremlins would count it as
// a survivor, and the report refuses the run because the log names it.
const exitInfra = 3

// shim dispatches a go command gremlins runs.
func shim(args []string) int {
	if len(args) > 0 && args[0] == "test" && os.Getenv("STEWARD_MUTATION_TARGET") != "" {
		switch {
		case hasFlag(args, "-coverprofile"):
			if err := coverageStep(args); err != nil {
				fmt.Fprintln(os.Stderr, "mutant: coverage:", err)
				return 1
			}
			return 0
		case hasFlag(args, "-failfast"):
			return mutantStep(args)
		}
	}
	realGo := os.Getenv("STEWARD_MUTATION_GO")
	if realGo == "" {
		fmt.Fprintln(os.Stderr, "mutant: STEWARD_MUTATION_GO (the real go) is not set")
		return exitInfra
	}
	err := syscall.Exec(realGo, append([]string{"go"}, args...), os.Environ())
	fmt.Fprintln(os.Stderr, "mutant: exec go:", err)
	return exitInfra
}

func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if a == name || len(a) > len(name) && a[:len(name)+1] == name+"=" {
			return true
		}
	}
	return false
}

// flagValue is the value of -name v or -name=v in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
		if len(a) > len(name) && a[:len(name)+1] == name+"=" {
			return a[len(name)+1:]
		}
	}
	return ""
}
