package app

import (
	"context"

	"steward/attention"
	"steward/govern"
	"steward/model"
)

// attentionLookup is the core's reader of the workspace's attention entries (an
// acknowledgement or a snooze of an entry that is not there is refused): one read of every
// source, as `steward status` reads them, through a preview-only session of the same
// settings, and the entries attention derives from it.
func attentionLookup(s Settings) govern.AttentionLookup {
	return func(ctx context.Context) (govern.AttentionEntries, error) {
		st := s
		st.Audit, st.AuditLog, st.History = AuditNone, nil, nil
		sess, err := Open(ctx, st)
		if err != nil {
			return govern.AttentionEntries{}, err
		}
		defer sess.Close()
		entries, unread := attention.FromSnapshot(sess.Snapshot(ctx), s.Attention.SLAs)
		out := govern.AttentionEntries{Evidence: make(map[string]string, len(entries)), Unread: map[string]bool{}}
		for _, e := range entries {
			out.Evidence[e.Key] = e.Evidence
		}
		for src := range unread {
			out.Unread[string(src)] = true
		}
		return out, nil
	}
}

// AttentionNow is the workspace's attention entries read once (every source, as `steward
// status` reads them) with the snapshot they come from: `steward attention list`.
func (sess *Session) AttentionNow(ctx context.Context) ([]attention.Entry, attention.Unread, *model.Snapshot) {
	snap := sess.Snapshot(ctx)
	entries, unread := attention.FromSnapshot(snap, sess.settings.Attention.SLAs)
	return entries, unread, snap
}
