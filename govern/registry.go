package govern

// registry lists every action the core knows.
func registry() []action {
	return nil
}
