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
)

var update = flag.Bool("update", false, "rewrite testdata/locks/golden/*.json from the current output")

// fixtureDir holds one lock file per verdict, expiration state and malformed
// case; fixtureNow is the clock the goldens are assessed at.
const fixtureDir = "../testdata/locks"

var fixtureNow = time.Date(2026, 7, 24, 6, 0, 0, 0, time.UTC)

type goldenOut struct {
	Class      Class       `json:"class"`
	Key        *Key        `json:"key"`
	Unreadable *Unreadable `json:"unreadable"`
	Findings   []Finding   `json:"findings"`
	Unknown    []string    `json:"unknown_keys"`
	Pointer    *Pointer    `json:"pointer,omitempty"`
	Assessment Assessment  `json:"assessment"`
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
				Unknown: e.Record.UnknownKeys, Pointer: e.Pointer, Assessment: Assess(&e.Record, fixtureNow)}
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
		contract   Contract
		state      ExpirationState
		expired    *bool
		placement  Placement
		unreadable UnreadableReason
	}{
		{"canonical.json", ContractCanonical, ExpirationRecorded, &fal, PlacementWorkLease, ""},
		{"canonical-expired.json", ContractCanonical, ExpirationRecorded, &tru, PlacementWorkLease, ""},
		{"canonical-expires-now.json", ContractCanonical, ExpirationRecorded, &tru, PlacementWorkLease, ""},
		{"expiration-missing.json", ContractIncomplete, ExpirationMissing, nil, PlacementWorkLease, ""},
		{"expiration-unparseable.json", ContractIncomplete, ExpirationUnparseable, nil, PlacementWorkLease, ""},
		{"expiration-non-utc.json", ContractCanonical, ExpirationRecorded, &fal, PlacementWorkLease, ""},
		{"legacy-top-level-claimant.json", ContractLegacy, ExpirationMissing, nil, PlacementTopLevel, ""},
		{"placement-both-work-lease-wins.json", ContractCanonical, ExpirationRecorded, &fal, PlacementWorkLease, ""},
		{"incomplete-no-claimant.json", ContractIncomplete, ExpirationRecorded, &fal, PlacementAbsent, ""},
		{"incomplete-legacy-no-profile.json", ContractIncomplete, ExpirationMissing, nil, PlacementTopLevel, ""},
		{"incomplete-unsanctioned-source.json", ContractIncomplete, ExpirationRecorded, &fal, PlacementWorkLease, ""},
		{"sanctioned-operator-override.json", ContractCanonical, ExpirationRecorded, &fal, PlacementWorkLease, ""},
		{"absent-empty-object.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, ""},
		{"malformed-truncated.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableTruncated},
		{"malformed-syntax.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableSyntax},
		{"malformed-not-object.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableNotObject},
		{"malformed-empty.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableEmpty},
		{"malformed-whitespace.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableEmpty},
		{"malformed-nul.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableNUL},
		{"malformed-invalid-utf8.json", ContractAbsent, ExpirationMissing, nil, PlacementAbsent, UnreadableInvalidUTF8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := ReadFile(fixtureDir, c.name)
			var reason UnreadableReason
			if e.Unreadable != nil {
				reason = e.Unreadable.Reason
			}
			if reason != c.unreadable {
				t.Fatalf("unreadable = %q, want %q", reason, c.unreadable)
			}
			a := Assess(&e.Record, fixtureNow)
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
