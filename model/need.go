package model

// Need says whom an entry of the snapshot needs — the one vocabulary of the workbench's
// attention inbox and `steward status --fail-on`.
type Need string

// The needs, most pressing first.
const (
	// NeedHuman: a person's judgement — a real collision, a question waiting for an
	// answer, a source that could not be read, an attempt whose outcome is unknown.
	NeedHuman Need = "human-required"
	// NeedOperator: an operator's sanctioned action (an orphan the governed core can
	// reconcile).
	NeedOperator Need = "operator"
	// NeedRoutine: information; nobody has to act.
	NeedRoutine Need = "routine"
)

// Need is a contention entry's need: refused claims over the window are routine
// information, every other kind is two owners of one item.
func (c *Contention) Need() Need {
	if c.Kind == ContentionClaimRefused {
		return NeedRoutine
	}
	return NeedHuman
}

// Need is an orphan's need: operator when a sanctioned action reconciles it, routine when
// it is inspect only.
func (o *Orphan) Need() Need {
	if o.Action != nil {
		return NeedOperator
	}
	return NeedRoutine
}

// Need is a source's need: an unavailable source needs a person (nothing can be concluded
// from it); a source that is not configured, read, or read in part does not.
func (h SourceHealth) Need() Need {
	if h.Status == StatusUnavailable {
		return NeedHuman
	}
	return NeedRoutine
}

// Needs counts the entries of s that need a person and an operator: unavailable sources,
// collisions and clarifications; orphans with a sanctioned action. Attempts of unknown
// outcome live in steward's audit log, not in the snapshot: the caller adds them.
func (s *Snapshot) Needs() (human, operator int) {
	for _, h := range []SourceHealth{s.Sources.Locks, s.Sources.DB, s.Sources.Gitea} {
		if h.Need() == NeedHuman {
			human++
		}
	}
	for _, c := range s.Contention {
		if c.Need() == NeedHuman {
			human++
		}
	}
	human += len(s.Clarifications)
	for _, o := range s.Orphans {
		if o.Need() == NeedOperator {
			operator++
		}
	}
	return human, operator
}
