package govern

// registry lists every action the core knows.
func registry() []action {
	return []action{
		reclaimExpired{}, abandonStale{}, expireSweep{},
		retireLock{}, restoreLock{}, undo{},
		claimAction{}, heartbeatAction{}, releaseAction{},
		answer{}, ask{}, relabel{},
		attentionAction{}, attentionAction{snooze: true},
		recoverItem{},
	}
}
