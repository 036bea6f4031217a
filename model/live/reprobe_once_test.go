package live

func reprobeOnce(l *Model) { l.reprobe(false) }
