package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// setup is what scripts/mutation tells the shim through its environment.
type setup struct {
	realGo  string         // STEWARD_MUTATION_GO: the real go command
	src     string         // STEWARD_MUTATION_SRC: the module root of the unmutated source
	module  string         // the module path, from src/go.mod
	target  string         // STEWARD_MUTATION_TARGET: the package mutated, relative to src ("leases")
	judges  []string       // STEWARD_MUTATION_JUDGES: the packages whose tests judge it ("leases leases/contract")
	state   string         // STEWARD_MUTATION_STATE: this run's directory (the map, the log, binaries)
	keepOut *regexp.Regexp // STEWARD_MUTATION_KEEPOUT: top-level tests left out of the run (nil: none)
	skip    string         // the same as a -test.skip pattern ("" when none)
	split   float64        // STEWARD_MUTATION_SPLIT: a test slower than this many seconds is run per subtest
	// hang (STEWARD_MUTATION_HANG, default 3m) ends one judging run of a mutant's tests: a
	// mutant that makes a read or retry loop endless then fails its tests by their own
	// timeout, as it would fail CI, instead of holding a worker for gremlins' timeout (hours
	// at the coefficient the script gives). The tests a mutant selects pass in seconds.
	hang time.Duration
	// perTest (STEWARD_MUTATION_SELECT=per-test, the default) maps what each test covers
	// and runs only the tests that reach a mutant; with "whole" each judge's tests run once
	// for the coverage and all of them for every mutant: a cheaper map for a few mutants.
	perTest bool
}

func loadSetup() (setup, error) {
	s := setup{
		realGo: os.Getenv("STEWARD_MUTATION_GO"),
		src:    os.Getenv("STEWARD_MUTATION_SRC"),
		target: os.Getenv("STEWARD_MUTATION_TARGET"),
		judges: strings.Fields(os.Getenv("STEWARD_MUTATION_JUDGES")),
		state:  os.Getenv("STEWARD_MUTATION_STATE"),
		split:  3,
		hang:   3 * time.Minute,
	}
	if v := os.Getenv("STEWARD_MUTATION_HANG"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return s, fmt.Errorf("STEWARD_MUTATION_HANG %q is not a positive duration", v)
		}
		s.hang = d
	}
	switch os.Getenv("STEWARD_MUTATION_SELECT") {
	case "", "per-test":
		s.perTest = true
	case "whole":
	default:
		return s, fmt.Errorf(
			"STEWARD_MUTATION_SELECT %q is not per-test or whole",
			os.Getenv("STEWARD_MUTATION_SELECT"),
		)
	}
	for name, v := range map[string]string{"STEWARD_MUTATION_GO": s.realGo, "STEWARD_MUTATION_SRC": s.src,
		"STEWARD_MUTATION_TARGET": s.target, "STEWARD_MUTATION_STATE": s.state} {
		if v == "" {
			return s, fmt.Errorf("%s is not set (scripts/mutation sets it)", name)
		}
	}
	if len(s.judges) == 0 {
		s.judges = []string{s.target}
	}
	if k := os.Getenv("STEWARD_MUTATION_KEEPOUT"); k != "" {
		re, err := regexp.Compile("^(" + k + ")$")
		if err != nil {
			return s, fmt.Errorf("STEWARD_MUTATION_KEEPOUT %q: %v", k, err)
		}
		s.keepOut, s.skip = re, "^("+k+")$"
	}
	if v := os.Getenv("STEWARD_MUTATION_SPLIT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 {
			return s, fmt.Errorf("STEWARD_MUTATION_SPLIT %q is not a positive number of seconds", v)
		}
		s.split = f
	}
	mod, err := modulePath(s.src)
	if err != nil {
		return s, err
	}
	s.module = mod
	return s, nil
}

// modulePath reads the module line of root/go.mod.
func modulePath(root string) (string, error) {
	f, err := os.Open(filepath.Join(root, "go.mod"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`), nil
		}
	}
	return "", errors.New(root + "/go.mod names no module")
}

// importPath is the import path of the package in dir (relative to the module root).
func (s setup) importPath(dir string) string {
	if dir == "." || dir == "" {
		return s.module
	}
	return s.module + "/" + filepath.ToSlash(dir)
}
