package tracecheck

// SetLineCacheSize sets the number of distinct lines CheckBytes
// remembers (0: none, every line is parsed) and returns a function that
// restores it.
func SetLineCacheSize(n int) (restore func()) {
	old := lineCacheSize
	lineCacheSize = n
	return func() { lineCacheSize = old }
}

// SetSmallTrace sets the size up to which a run's trace is held in
// memory (0: every trace is read line by line) and returns the restore.
func SetSmallTrace(n int) (restore func()) {
	old := smallTrace
	smallTrace = n
	return func() { smallTrace = old }
}
