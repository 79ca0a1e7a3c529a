package tracecheck

// SetLineCacheSize sets the number of distinct lines CheckBytes
// remembers (0: none, every line is parsed) and returns a function that
// restores it.
func SetLineCacheSize(n int) (restore func()) {
	old := lineCacheSize
	lineCacheSize = n
	return func() { lineCacheSize = old }
}
