//go:build !race

package eventservice

// raceBuild: the race detector is off (see race_on_test.go).
const raceBuild = false
