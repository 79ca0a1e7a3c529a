//go:build race

package coordinator_test

// raceBuild: the race detector is on. The explorer runs one step at a
// time on one goroutine (the event services' loops answer it in turn), so
// the detector finds nothing in its schedules that the plain build does
// not; under -race it runs the first xRaceLimit of each scenario's
// interleavings (explore_scenarios_test.go), the plain build all of them.
const raceBuild = true
