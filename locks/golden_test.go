package locks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"steward/locks/lockrec"
)

var update = flag.Bool("update", false, "rewrite testdata/locks/golden/*.json from the current output")

// fixtureDir holds one lock file per verdict, expiration state and malformed
// case; fixtureNow is the clock the goldens are assessed at.
const fixtureDir = "../testdata/locks"

var fixtureNow = time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)

type goldenOut struct {
	Class      lockrec.Class       `json:"class"`
	Key        *lockrec.Key        `json:"key"`
	Unreadable *lockrec.Unreadable `json:"unreadable"`
	Findings   []lockrec.Finding   `json:"findings"`
	Unknown    []string            `json:"unknown_keys"`
	Pointer    *lockrec.Pointer    `json:"pointer,omitempty"`
	Assessment lockrec.Assessment  `json:"assessment"`
}

func fixtureNames(t testing.TB) []string {
	ents, err := os.ReadDir(fixtureDir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			names = append(names, e.Name())
		}
	}
	if len(names) < 25 {
		t.Fatalf("only %d fixtures found", len(names))
	}
	return names
}

func TestGolden(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(name, func(t *testing.T) {
			e := ReadFile(fixtureDir, name)
			out := goldenOut{Class: e.Class, Unreadable: e.Unreadable, Findings: e.Findings,
				Unknown: e.Record.UnknownKeys, Pointer: e.Pointer, Assessment: lockrec.Assess(&e.Record, fixtureNow)}
			if e.HasKey {
				out.Key = &e.Key
			}
			got, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join(fixtureDir, "golden", name)
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./locks -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("golden mismatch for %s\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}

// TestFixtureVerdicts pins the verdict each fixture exists to show, so a
// wrong golden cannot be accepted by -update unnoticed.
func TestFixtureVerdicts(t *testing.T) {
	t.Parallel()
	tru, fal := true, false
	cases := []struct {
		name       string
		contract   lockrec.Contract
		state      lockrec.ExpirationState
		expired    *bool
		placement  lockrec.Placement
		unreadable lockrec.UnreadableReason
	}{
		{"canonical.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &fal, lockrec.PlacementWorkLease, ""},
		{"canonical-expired.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &tru, lockrec.PlacementWorkLease, ""},
		{"canonical-expires-now.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &tru, lockrec.PlacementWorkLease, ""},
		{"expiration-missing.json", lockrec.ContractIncomplete, lockrec.ExpirationMissing, nil, lockrec.PlacementWorkLease, ""},
		{"expiration-unparseable.json", lockrec.ContractIncomplete, lockrec.ExpirationUnparseable, nil, lockrec.PlacementWorkLease, ""},
		{"expiration-non-utc.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &fal, lockrec.PlacementWorkLease, ""},
		{"legacy-top-level-claimant.json", lockrec.ContractLegacy, lockrec.ExpirationMissing, nil, lockrec.PlacementTopLevel, ""},
		{"placement-both-work-lease-wins.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &fal, lockrec.PlacementWorkLease, ""},
		{"incomplete-no-claimant.json", lockrec.ContractIncomplete, lockrec.ExpirationRecorded, &fal, lockrec.PlacementAbsent, ""},
		{"incomplete-legacy-no-profile.json", lockrec.ContractIncomplete, lockrec.ExpirationMissing, nil, lockrec.PlacementTopLevel, ""},
		{"incomplete-unsanctioned-source.json", lockrec.ContractIncomplete, lockrec.ExpirationRecorded, &fal, lockrec.PlacementWorkLease, ""},
		{"sanctioned-operator-override.json", lockrec.ContractCanonical, lockrec.ExpirationRecorded, &fal, lockrec.PlacementWorkLease, ""},
		{"absent-empty-object.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, ""},
		{"malformed-truncated.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableTruncated},
		{"malformed-syntax.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableSyntax},
		{"malformed-not-object.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableNotObject},
		{"malformed-empty.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableEmpty},
		{"malformed-whitespace.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableEmpty},
		{"malformed-nul.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableNUL},
		{"malformed-invalid-utf8.json", lockrec.ContractAbsent, lockrec.ExpirationMissing, nil, lockrec.PlacementAbsent, lockrec.UnreadableInvalidUTF8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := ReadFile(fixtureDir, c.name)
			var reason lockrec.UnreadableReason
			if e.Unreadable != nil {
				reason = e.Unreadable.Reason
			}
			if reason != c.unreadable {
				t.Fatalf("unreadable = %q, want %q", reason, c.unreadable)
			}
			a := lockrec.Assess(&e.Record, fixtureNow)
			if a.Contract != c.contract || a.Expiration.State != c.state || a.ClaimantPlacement != c.placement {
				t.Errorf("got %s/%s/%s, want %s/%s/%s", a.Contract, a.Expiration.State, a.ClaimantPlacement,
					c.contract, c.state, c.placement)
			}
			if (a.Expiration.Expired == nil) != (c.expired == nil) ||
				(c.expired != nil && *a.Expiration.Expired != *c.expired) {
				t.Errorf("expired = %v, want %v", a.Expiration.Expired, c.expired)
			}
		})
	}
}
