//go:build !race

package coordinator_test

// raceBuild: the race detector is off (see race_on_test.go).
const raceBuild = false
