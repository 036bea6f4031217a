package govern

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"

	"steward/leases/leaserec"
)

// A claim token is the secret that proves a worker holds a claim: the one identity a worker
// cannot borrow. A claim made with one (ClaimParams.ClaimToken; `steward mcp` mints one for every
// claim and returns it to the worker alone) records only its SHA-256 in its lease's
// provenance (provenance_json, a column of the supervised system's own schema — its
// parse_lease_provenance reads that JSON as an open dict, seed 002 L21689–21738 — where
// steward already marks its claims with their attempt, lock file and task session). The
// hash lives with the lease row, so every steward on the workspace, on SQLite or
// PostgreSQL, before or after a restart, checks the same proof; the token itself is never
// stored, printed, logged or audited.
//
// A heartbeat, release or ask on a lease whose claim recorded a token hash must prove
// ownership: present the token (OwnerProof.ClaimToken), or come from the process the lease
// records on this host as the transport proves it (OwnerProof.CallerPID: over stdio the process
// that started steward mcp, never a pid a client declares). A core made with
// WithOwnerProof demands that proof for every lease, token or not — steward mcp's, whose
// HTTP connections have no process until they claim. A wrong token is refused whatever
// else the request proves, and so is a proven caller process other than the lease's.
const (
	// DetailClaimToken is the key under which a claim's or heartbeat's outcome carries its
	// claim token back to the worker that holds it (Outcome.Detail, as the MCP client
	// reports it). Secret: never printed, logged, audited or passed in argv.
	DetailClaimToken = "claim_token"
	// claimTokenKey is the provenance key of the token's SHA-256 (hex).
	claimTokenKey = "claim_token_sha256"
	// claimTokenPrefix starts every token, so secret scanners and the audit redaction
	// recognise one wherever it turns up.
	claimTokenPrefix = "stw_ct_"
)

// claimTokenRE is a token's shape: the prefix and 32 random bytes, base64url (256 bits).
var claimTokenRE = regexp.MustCompile(`^` + claimTokenPrefix + `[A-Za-z0-9_-]{43}$`)

// claimTokenAnywhereRE finds a token in text, for the audit redaction.
var claimTokenAnywhereRE = regexp.MustCompile(claimTokenPrefix + `[A-Za-z0-9_-]{16,}`)

// NewClaimToken returns a fresh claim token: 256 random bits from the operating system's
// generator.
func NewClaimToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("steward: no randomness for a claim token: " + err.Error())
	}
	return claimTokenPrefix + base64.RawURLEncoding.EncodeToString(b[:])
}

// ValidClaimToken reports whether tok has a claim token's shape.
func ValidClaimToken(tok string) bool { return claimTokenRE.MatchString(tok) }

// ClaimTokenHash is what a lease records of its claim token: its SHA-256, in hex.
func ClaimTokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

// LeaseTokenHash is the claim-token hash lease l's claim recorded ("" when none).
func LeaseTokenHash(l leaserec.Lease) string {
	s, _ := l.Provenance[claimTokenKey].(string)
	return s
}

// TokenMatches reports whether tok is the claim token lease l's claim recorded (in
// constant time).
func TokenMatches(l leaserec.Lease, tok string) bool {
	want := LeaseTokenHash(l)
	return want != "" && tok != "" && subtle.ConstantTimeCompare([]byte(ClaimTokenHash(tok)), []byte(want)) == 1
}

// WithOwnerProof returns a core that refuses not_owner every worker action on an existing
// lease (heartbeat, release, ask) that does not prove ownership — the lease's claim token,
// or a caller process the lease records on this host — also on a lease whose claim
// recorded no token. steward mcp's cores are made so: a connection's word for its session
// is no proof. Close the parent core, not the one returned: they share its handles.
func (c *Core) WithOwnerProof() *Core {
	cp := *c
	cp.needProof = true
	return &cp
}

// proveOwner checks that req proves it comes from lease l's claimant (l is the acting
// session's: ownLease checked that). A caller process the transport proves
// (OwnerProof.CallerPID) that is not the one the lease records on this host is refused, token or
// not: a claim is bound to the process that made it. A token, when given, must be the
// lease's. Otherwise the lease's own process on this host proves it. Without either, a
// lease whose claim recorded no token passes on a core that does not demand proof (the
// command line's, as before); anything else is refused not_owner.
func (c *Core) proveOwner(l *leaserec.Lease, req Request) *Refusal {
	hash := LeaseTokenHash(*l)
	_, proof := heldBy(req)
	tok, pid := proof.ClaimToken, proof.CallerPID
	ownPID := l.OwnerPID > 0 && l.OwnerHost == c.ws.host()
	switch {
	case pid != "" && ownPID && pid != strconv.FormatInt(l.OwnerPID, 10):
		return refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"lease %s was claimed by process %d on this host; this call comes from process %s. A claim is bound to the "+
					"process that made it: act from that process, or let the lease expire",
				l.LeaseID,
				l.OwnerPID,
				pid,
			),
		)
	case tok != "" && hash == "":
		return refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"lease %s was claimed without a claim token (on the command line or by another tool), so no token proves it; "+
					"the worker that claimed it acts on it from its own process",
				l.LeaseID,
			),
		)
	case tok != "" && !TokenMatches(*l, tok):
		return refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"the claim token does not match lease %s: a worker acts only on the claim it made. Pass the claim_token your "+
					"claim returned, unchanged",
				l.LeaseID,
			),
		)
	case tok != "", pid != "" && ownPID:
		return nil
	case hash != "" || c.needProof:
		return refuse(
			CodeNotOwner,
			fmt.Sprintf(
				"this call does not prove it comes from lease %s's claimant: pass the claim_token the claim returned (with the "+
					"fence). A session id alone is no proof",
				l.LeaseID,
			),
		)
	}
	return nil
}
