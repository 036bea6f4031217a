package leaserec

// HealthStatus is the readability of one section of the DB.
type HealthStatus string

// Health statuses.
const (
	HealthOK          HealthStatus = "ok"
	HealthDegraded    HealthStatus = "degraded"
	HealthUnavailable HealthStatus = "unavailable"
)

// Health says whether a section was read fully, partly (degraded: a key column
// the seed has is missing, so the set of rows read may not be all there is) or
// not at all (unavailable), and why. Notes say what the read lacks without
// making it incomplete: an absent enrichment column (steward's own, or one
// inferred from the seed), rows with undecodable values (each row names its
// problems; only that row's verdicts are unproven). Notes never change Status.
type Health struct {
	Status  HealthStatus
	Reasons []string
	Notes   []string
}
