package alloc

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Candidate is what is known about one backlog item when work is chosen.
type Candidate struct {
	Number int64
	Title  string
	Body   string
	Labels []string
	Open   bool
	// Claimed is true when a lock file or an active lease exists for the item.
	Claimed bool
	// HeldBy is the session of the active lease on the item, when there is one.
	HeldBy string
}

// Rules say which labels exclude an item from the pool.
type Rules struct {
	Markers []string // clarification marker labels
	Blocked string   // the blocked label
}

// The skip codes of the allocation: the seed's (claimed_by_other_session,
// excluded_by_controller, epic_or_child_only_container; seed 002 lines 719-725 and 1101) and
// ours for the charter's other gates (closed, blocked, awaiting a maintainer, an unmet
// dependency).
const (
	SkipClosed               = "closed"
	SkipClaimed              = "claimed_by_other_session"
	skipExcluded             = "excluded_by_controller"
	SkipContainer            = "epic_or_child_only_container"
	SkipBlocked              = "blocked"
	SkipAwaitingMaintainer   = "awaiting_clarification"
	SkipDependencyUnmet      = "dependency_unmet"
	reasonAwaitingMaintainer = "awaiting clarification"
)

// Priority labels and their weights; an item without one weighs as medium-low.
var priorityWeight = map[string]int{
	"priority:critical": 40,
	"priority:high":     30,
	"priority:medium":   20,
	"priority:low":      10,
}

const noPriorityWeight = 15

var dependsRe = regexp.MustCompile(`(?i)depends\s+on\s+#(\d+)`)

// Dependencies returns the item numbers a body names as "depends on #N", in order, once each.
func Dependencies(body string) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, m := range dependsRe.FindAllStringSubmatch(body, -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err == nil && n > 0 && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (r Rules) excluded(labels []string) (bool, string) {
	for _, l := range labels {
		if l == r.Blocked {
			return true, SkipBlocked
		}
		for _, m := range r.Markers {
			if l == m {
				return true, reasonAwaitingMaintainer
			}
		}
	}
	return false, ""
}

// containerLabels and childOnlyMarkers are the seed's evidence that an issue is an epic,
// umbrella, vision or roadmap container whose implementation is delegated to child issues
// (seed 002 lines 776-900: _CHILD_ONLY_BODY_MARKERS and _EPIC_LABELS, #844/#854). A title
// prefix alone never excludes; it only corroborates.
var containerLabels = map[string]bool{}

func init() {
	for _, kind := range []string{"epic", "umbrella", "vision", "roadmap"} {
		for _, p := range []string{"", "type:", "kind:", "scope:"} {
			containerLabels[p+kind] = true
		}
	}
}

var childOnlyMarkers = []string{
	"implementation is delivered via child issues only",
	"implementation is delivered through child issues only",
	"implementation is delivered via child issues",
	"implementation is delivered through child issues",
	"do not implement product features in this epic",
	"no product feature implementation is claimed complete solely on this epic",
	"implementable child issues remain independently eligible",
	"owns the product roadmap and linkage",
	"this epic owns the product roadmap",
	"coordination container",
	"child-only container",
	"implementation is delegated to child",
	"do not implement features on this issue",
	"implementing features on this roadmap issue",
	"implementation is via linked children only",
	"no product feature claimed complete on this issue alone",
	"phased delivery roadmap and epic sequencing",
	"this issue is the enduring source of truth",
	"enduring source of truth for the",
	"canonical product vision — enduring source of truth",
	"canonical product vision - enduring source of truth",
	"state: vision-active",
	"state: roadmap-active",
}

var titlePrefixes = []struct{ prefix, token string }{
	{"epic:", "title_epic_prefix"}, {"epic ", "title_epic_prefix"},
	{"umbrella:", "title_umbrella_prefix"}, {"umbrella ", "title_umbrella_prefix"},
	{"roadmap:", "title_roadmap_prefix"}, {"roadmap ", "title_roadmap_prefix"},
	{"product vision:", "title_vision_prefix"}, {"product vision ", "title_vision_prefix"},
	{"vision:", "title_vision_prefix"},
}

// container reports whether c is an epic or child-only container (the seed's
// classify_epic_or_child_only_container): a container label, or a child-only marker in the
// body. detail names the evidence as the seed does ("label=type:epic; body_marker=…").
func container(c Candidate) (bool, string) {
	var label string
	for _, l := range c.Labels {
		if n := strings.ToLower(strings.TrimSpace(l)); containerLabels[n] && (label == "" || n < label) {
			label = n
		}
	}
	body := strings.ToLower(c.Body)
	var hit string
	for _, m := range childOnlyMarkers {
		if strings.Contains(body, m) {
			hit = m
			break
		}
	}
	if label == "" && hit == "" {
		return false, ""
	}
	var parts []string
	title := strings.ToLower(strings.TrimSpace(c.Title))
	for _, p := range titlePrefixes {
		if strings.HasPrefix(title, p.prefix) {
			parts = append(parts, p.token)
			break
		}
	}
	if label != "" {
		parts = append(parts, "label="+label)
	}
	if hit != "" {
		parts = append(parts, "body_marker="+strconv.Quote(hit))
	}
	return true, strings.Join(parts, "; ")
}

// Eligible reports whether a worker may go for c, and why not. open says whether an item
// number is open (a dependency not in the map counts as open: unproven is not done).
func Eligible(c Candidate, rules Rules, open map[int64]bool) (bool, string) {
	ok, _, why := eligible(c, rules, open)
	return ok, why
}

// Gate is Eligible with the stable code of the first gate c fails ("" when it passes):
// one of the Skip* codes, the seed's skip record's reason_code.
func Gate(c Candidate, rules Rules, open map[int64]bool) (code, why string) {
	_, code, why = eligible(c, rules, open)
	return code, why
}

func eligible(c Candidate, rules Rules, open map[int64]bool) (bool, string, string) {
	switch {
	case !c.Open:
		return false, SkipClosed, "closed"
	case c.Claimed:
		return false, SkipClaimed, "claimed"
	}
	if ex, why := rules.excluded(c.Labels); ex {
		code := SkipBlocked
		if why == reasonAwaitingMaintainer {
			code = SkipAwaitingMaintainer
		}
		return false, code, why
	}
	if is, detail := container(c); is {
		return false, SkipContainer, "epic_or_child_only_container: " + detail + "; implementation is delegated to child " +
			"issues"
	}
	for _, d := range Dependencies(c.Body) {
		if o, known := open[d]; o || !known {
			return false, SkipDependencyUnmet, "depends on open #" + strconv.FormatInt(d, 10)
		}
	}
	return true, "", ""
}

// priority is the weight of an item's highest priority label (medium-low without one).
func priority(labels []string) int {
	w := 0
	for _, l := range labels {
		if v, ok := priorityWeight[strings.ToLower(l)]; ok && v > w {
			w = v
		}
	}
	if w == 0 {
		w = noPriorityWeight
	}
	return w
}

// Value is how much a worker wants c: its priority plus what closing it would unblock.
func Value(c Candidate, dependents map[int64]int) int {
	return priority(c.Labels) + 5*dependents[c.Number]
}

// Index returns which items are open and how many open items depend on each.
func Index(cs []Candidate) (open map[int64]bool, dependents map[int64]int) {
	open = make(map[int64]bool, len(cs))
	dependents = map[int64]int{}
	for _, c := range cs {
		open[c.Number] = c.Open
	}
	for _, c := range cs {
		if !c.Open {
			continue
		}
		for _, d := range Dependencies(c.Body) {
			dependents[d]++
		}
	}
	return open, dependents
}

// Skip is a candidate the allocation passed over, with the seed's skip record fields.
type Skip struct {
	Number int64  `json:"number"`
	Code   string `json:"reason_code"`
	Reason string `json:"reason"`
}

// Order is the allocation order: every eligible candidate, best first, and every other one
// with why it was skipped. Excluded numbers go first (the seed's pre-rank exclusion), then
// the charter's gates (closed, claimed, blocked, awaiting a maintainer, a container, an
// unmet dependency); the eligible rank by priority, then by how many open items they
// unblock, then oldest (lowest number) first. It is a pure function of its inputs: the same
// backlog and claims give the same order, so every worker asking sees the same head.
func Order(cs []Candidate, rules Rules, exclude []int64) (ranked []Candidate, skipped []Skip) {
	open, deps := Index(cs)
	ex := map[int64]bool{}
	for _, n := range exclude {
		ex[n] = true
	}
	for _, c := range cs {
		if ex[c.Number] {
			skipped = append(skipped, Skip{c.Number, skipExcluded, "excluded by the caller"})
			continue
		}
		if ok, code, why := eligible(c, rules, open); !ok {
			if code == SkipClaimed && c.HeldBy != "" {
				why = "active lease of session " + c.HeldBy
			}
			skipped = append(skipped, Skip{c.Number, code, why})
			continue
		}
		ranked = append(ranked, c)
	}
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		if pa, pb := priority(a.Labels), priority(b.Labels); pa != pb {
			return pa > pb
		}
		if da, db := deps[a.Number], deps[b.Number]; da != db {
			return da > db
		}
		return a.Number < b.Number
	})
	sort.SliceStable(skipped, func(i, j int) bool { return skipped[i].Number < skipped[j].Number })
	return ranked, skipped
}
