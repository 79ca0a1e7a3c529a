//go:build !amd64

package modelcheck

// prefetch is a no-op where no prefetch instruction is wired in.
func prefetch(*uint64) {}
