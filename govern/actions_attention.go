package govern

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"steward/govern/actionid"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// codeAlreadyAcknowledged refuses an acknowledgement that would change nothing.
const codeAlreadyAcknowledged = "already_acknowledged"

// MaxSnooze is the longest snooze: longer silence is an acknowledgement's job.
const MaxSnooze = 7 * 24 * time.Hour

// AttentionMark is one line of the attention file: an acknowledgement or a snooze of the
// entry Entry while its evidence is Evidence.
type AttentionMark struct {
	V        int       `json:"v"`
	Attempt  string    `json:"attempt"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"` // ack | snooze
	Entry    string    `json:"entry"`
	Evidence string    `json:"evidence"`
	Level    int       `json:"level"`
	Until    time.Time `json:"until,omitzero"`
	By       string    `json:"by"`
	Actor    Actor     `json:"actor"`
}

// AttentionPath is the attention file of the audit log at auditPath.
func AttentionPath(auditPath string) string { return auditPath + ".attention.jsonl" }

// ReadAttention reads every mark of the attention file beside the audit log at auditPath,
// in the order written. Undecodable lines are findings, never dropped silently; a missing
// file reads as no marks.
func ReadAttention(auditPath string) ([]AttentionMark, []AuditFinding, error) {
	f, err := os.Open(AttentionPath(auditPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var out []AttentionMark
	var finds []AuditFinding
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var m AttentionMark
		if err := json.Unmarshal(b, &m); err != nil || m.Attempt == "" || m.Entry == "" ||
			(m.Kind != "ack" && m.Kind != "snooze") {
			why := "not a mark"
			if err != nil {
				why = err.Error()
			}
			finds = append(finds, AuditFinding{Line: n, Reason: "undecodable attention mark: " + why})
			continue
		}
		out = append(out, m)
	}
	return out, finds, sc.Err()
}

// AttentionEntries are a workspace's attention entries at one read: each entry's evidence
// fingerprint by its key, and the sources the read did not read completely ("locks", "db",
// "gitea"), whose entries' absence proves nothing.
type AttentionEntries struct {
	Evidence map[string]string
	Unread   map[string]bool
}

// AttentionLookup reads the workspace's attention entries now (package attention derives
// them from a snapshot; govern cannot import it, so the assembly passes this in).
type AttentionLookup func(ctx context.Context) (AttentionEntries, error)

// entrySources are the sources an entry of key is derived from (by its kind, the key's first
// field): absent from a read that missed one of them, it may still exist.
func entrySources(key string) []string {
	kind, _, _ := strings.Cut(key, ":")
	switch kind {
	case "clarification":
		return []string{"gitea"}
	case "source":
		return nil // an unavailable source is itself the entry
	}
	return []string{"locks", "db"}
}

// checkEntry refuses an acknowledgement or a snooze of an entry that is not there now —
// a mistyped key would otherwise be recorded and audited as done — or whose evidence is no
// longer what the person saw (it is a new entry to them: look again).
func (c *Core) checkEntry(ctx context.Context, key, evidence string) (*Refusal, error) {
	if c.entries == nil {
		return nil, nil
	}
	es, err := c.entries(ctx)
	if err != nil {
		return refuse(
			CodeSourceUnavailable,
			"the workspace's attention entries cannot be read ("+err.Error()+"), so "+key+" cannot be found; retry when the "+
				"sources read",
		), nil
	}
	ev, ok := es.Evidence[key]
	switch {
	case ok && ev != evidence:
		return refuse(
			CodeFenceMoved,
			fmt.Sprintf(
				"%s's evidence is now %s, not %s: it changed since it was seen, and is a new entry to you. Look at it again "+
					"(`steward attention list`) and acknowledge what is there now.",
				key,
				ev,
				evidence,
			),
		), nil
	case ok:
		return nil, nil
	}
	for _, s := range entrySources(key) {
		if es.Unread[s] {
			return refuse(
				CodeSourceUnavailable,
				"no attention entry "+key+" in what could be read, but "+s+" was not read completely, so its absence proves "+
					"nothing; retry when it reads",
			), nil
		}
	}
	return refuse(
		CodeNotFound,
		"there is no attention entry "+key+" now (mistyped, or it cleared meanwhile). `steward attention list` shows the "+
			"entries with their keys and evidence.",
	), nil
}

// attentionAction is attention.ack (snooze false) and attention.snooze: a person
// acknowledges or snoozes an attention entry (package attention) — a question waiting, a
// collision, an orphan, a lost source. The effect is one line appended to the attention
// file beside the audit log (AttentionPath), which every steward on the workspace reads: the
// inbox and `steward watch` keep an acknowledged entry quiet until its evidence changes or
// it escalates past the level that was acknowledged, and a snoozed one until the snooze ends.
type attentionAction struct{ snooze bool }

// attentionFence is the fence of an attention action: the last mark of the entry.
type attentionFence struct {
	Entry    string
	LastMark string
}

func (a attentionAction) spec() Spec {
	if a.snooze {
		return Spec{
			ID:      actionid.AttentionSnooze,
			Title:   "Snooze an attention entry for a while",
			MinRole: RoleOperator,
			Tier:    TierGatedWrite,
		}
	}
	return Spec{
		ID:      actionid.AttentionAck,
		Title:   "Acknowledge an attention entry",
		MinRole: RoleOperator,
		Tier:    TierGatedWrite,
	}
}

// params reads the request: the evidence and level the person saw, and a snooze's length.
func (a attentionAction) params(req Request) (level int, d time.Duration, r *Refusal) {
	if req.Target.Entry == "" {
		return 0, 0, refuse(
			CodeInvalidRequest,
			"name the attention entry by its key, as the inbox and `steward watch --json` show it",
		)
	}
	p := paramsFor[AttentionParams](req)
	if p.Evidence == "" {
		return 0, 0, refuse(
			CodeInvalidRequest,
			"give the entry's evidence fingerprint (the `evidence` field of `steward watch --json`): an acknowledgement "+
				"holds for what was seen",
		)
	}
	if s := p.Level; s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n > 1000 {
			return 0, 0, refuse(
				CodeInvalidRequest,
				fmt.Sprintf("level %q is not a level (0 within the SLA, 1 past it, 2 and up for each re-escalation)", clipParam(s)),
			)
		}
		level = n
	}
	if a.snooze {
		v, err := time.ParseDuration(p.For)
		if err != nil || v <= 0 || v > MaxSnooze {
			return 0, 0, refuse(
				CodeInvalidRequest,
				fmt.Sprintf("snooze for %q: give a duration from 1m to %s, such as 30m or 4h", clipParam(p.For), MaxSnooze),
			)
		}
		d = v
	}
	return level, d, nil
}

func clipParam(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func (c *Core) attentionMarks() ([]AttentionMark, error) {
	if c.audit == nil {
		return nil, nil
	}
	ms, _, err := ReadAttention(c.audit.Path())
	return ms, err
}

func lastMark(ms []AttentionMark, entry string) *AttentionMark {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Entry == entry {
			return &ms[i]
		}
	}
	return nil
}

func (a attentionAction) plan(ctx context.Context, c *Core, req Request) (*plan, error) {
	level, d, r := a.params(req)
	if r != nil {
		return &plan{refusal: r}, nil
	}
	ms, err := c.attentionMarks()
	if err != nil {
		return &plan{
			refusal: refuse(
				CodeAuditUnavailable,
				"the attention file beside the audit log is unreadable ("+err.Error()+"); fix its permissions, then retry",
			),
		}, nil
	}
	key, ev := req.Target.Entry, paramsFor[AttentionParams](req).Evidence
	if r, err := c.checkEntry(ctx, key, ev); r != nil || err != nil {
		return &plan{refusal: r}, err
	}
	p := &plan{state: attentionFence{Entry: key}}
	last := lastMark(ms, key)
	if last != nil {
		p.state = attentionFence{Entry: key, LastMark: last.Attempt}
		p.evidence = []string{
			fmt.Sprintf(
				"last mark: %s by %s at %s (level %d, evidence %s)",
				last.Kind,
				last.By,
				last.At.UTC().Format(time.RFC3339),
				last.Level,
				last.Evidence,
			),
		}
	} else {
		p.evidence = []string{"last mark: none"}
	}
	file := "the attention file beside the audit log"
	if c.audit != nil {
		file = AttentionPath(c.audit.Path())
	}
	if a.snooze {
		p.effects = []string{
			fmt.Sprintf(
				"%s snoozes %s for %s (until about %s): it leaves the inbox and notifies nobody until then; recorded in %s",
				c.who(),
				key,
				d,
				c.now().Add(d).UTC().Format(time.RFC3339),
				file,
			),
		}
	} else {
		if last != nil && last.Kind == "ack" && last.Evidence == ev && last.Level >= level {
			p.refusal = refuse(codeAlreadyAcknowledged, fmt.Sprintf("%s acknowledged %s at level %d already (%s). Nothing "+
				"to do; it returns by itself when its evidence changes or it escalates.",
				last.By, key, last.Level, last.At.UTC().Format(time.RFC3339)))
		}
		p.effects = []string{fmt.Sprintf("%s acknowledges %s at level %d: it leaves the inbox until its evidence changes "+
			"or it waits past the next level; recorded in %s",
			c.who(), key, level, file)}
	}
	p.fences = []string{"no other acknowledgement or snooze of " + key + " since the preview"}
	return p, nil
}

func (a attentionAction) apply(ctx context.Context, c *Core, req Request, p *plan, attempt string) effect {
	level, d, _ := a.params(req)
	now := c.now()
	m := AttentionMark{
		V:        1,
		Attempt:  attempt,
		At:       now.UTC(),
		Kind:     "ack",
		Entry:    req.Target.Entry,
		Evidence: paramsFor[AttentionParams](req).Evidence,
		Level:    level,
		By:       c.who(),
		Actor:    c.actor,
	}
	if a.snooze {
		m.Kind, m.Until = "snooze", now.Add(d).UTC()
	}
	line, err := json.Marshal(m)
	if err != nil {
		return effect{err: err}
	}
	f, err := os.OpenFile(AttentionPath(c.audit.Path()), os.O_RDWR|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return effect{err: fmt.Errorf("open the attention file: %w", err)}
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return effect{err: fmt.Errorf("lock the attention file: %w", err)}
	}
	c.doStep("attention-locked")
	// The fence, re-checked under the file's lock: another steward's mark since the plan
	// refuses this one.
	ms, _, err := ReadAttention(c.audit.Path())
	if err != nil {
		return effect{err: fmt.Errorf("re-read the attention file: %w", err)}
	}
	want := p.state.(attentionFence)
	got := attentionFence{Entry: want.Entry}
	if last := lastMark(ms, want.Entry); last != nil {
		got.LastMark = last.Attempt
	}
	if got != want {
		return effect{
			refusal: refuse(
				CodeFenceMoved,
				fmt.Sprintf(
					"%s was acknowledged or snoozed by someone else since the preview (mark %s). Nothing was recorded; look again.",
					want.Entry,
					got.LastMark,
				),
			),
		}
	}
	torn, err := tornTail(int(f.Fd()))
	if err != nil {
		return effect{err: fmt.Errorf("read the attention file's end: %w", err)}
	}
	line = append(line, '\n')
	if torn {
		line = append([]byte{'\n'}, line...)
	}
	if _, err := f.Write(line); err != nil {
		return effect{sent: true, err: fmt.Errorf("write the attention file: %w", err)}
	}
	c.doStep("attention-written")
	if err := f.Sync(); err != nil {
		return effect{sent: true, err: fmt.Errorf("fsync the attention file: %w", err)}
	}
	c.doStep("attention-synced")
	what := fmt.Sprintf("%s acknowledged at level %d", m.Entry, level)
	if a.snooze {
		what = fmt.Sprintf("%s snoozed until %s", m.Entry, m.Until.Format(time.RFC3339))
	}
	return effect{sent: true, effects: []string{what}, detail: map[string]string{"until": stampOrEmpty(m.Until)}}
}

func stampOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// verify settles an attention attempt from the attention file: its mark is there (the
// attempt's own id) or it is not.
func (attentionAction) verify(ctx context.Context, c *Core, intent Record) (Result, []string, bool) {
	ms, _, err := ReadAttention(c.audit.Path())
	if err != nil {
		return "", []string{"the attention file is unreadable: " + err.Error()}, false
	}
	for _, m := range ms {
		if m.Attempt == intent.Attempt {
			return ResultSucceeded, []string{
				fmt.Sprintf("attention file: %s of %s by %s at %s", m.Kind, m.Entry, m.By, m.At.Format(time.RFC3339)),
			}, true
		}
	}
	return ResultFailed, []string{"attention file: no mark of attempt " + intent.Attempt}, true
}
