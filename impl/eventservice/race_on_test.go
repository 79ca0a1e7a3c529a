//go:build race

package eventservice

// raceBuild: the race detector is on. The explorer's schedules run one
// thread at a time, ordered by channels, so the detector finds nothing
// in them that the plain build does not; the explorer runs fewer of them
// there (explore_test.go).
const raceBuild = true
