package main

import (
	"bytes"
	"net"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestBadFlagsOneLineExit2: every bad command line and an unreachable
// coordinator give one line on stderr and exit 2.
func TestBadFlagsOneLineExit2(t *testing.T) {
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := dead.Addr().String()
	dead.Close()
	dir := t.TempDir()
	for name, args := range map[string][]string{
		"no role":          {},
		"bad role":         {"--role", "king"},
		"node without id":  {"--role", "node", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat"},
		"bad version":      {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--version", "7", "--transport", "heartbeat"},
		"bad transport":    {"--role", "coordinator", "--transport", "pigeon"},
		"logcoord missing": {"--role", "coordinator"},
		"bad duration":     {"--role", "logcoord", "--ttl", "-1s"},
		"unknown flag":     {"--role", "logcoord", "--frobnicate"},
		"stray argument":   {"--role", "logcoord", "extra"},
		"bad listen":       {"--role", "logcoord", "--listen", "256.0.0.1:99999"},
		"bad log level":    {"--role", "logcoord", "--log-level", "loud"},
		"unreachable":      {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat"},
	} {
		var stderr bytes.Buffer
		code := run(args, &stderr)
		out := strings.TrimRight(stderr.String(), "\n")
		if code != 2 || out == "" || strings.Contains(out, "\n") || !strings.HasPrefix(out, "drainproofd: ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", name, code, stderr.String())
		}
	}
}
