package main

import (
	"bytes"
	"net"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/drainproof/drainproof/harness/pki"
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
	ca, err := pki.NewCA("test ca")
	if err != nil {
		t.Fatal(err)
	}
	n1, err := ca.WriteIdentity(dir, "n1")
	if err != nil {
		t.Fatal(err)
	}
	n2, err := ca.WriteIdentity(dir, "n2")
	if err != nil {
		t.Fatal(err)
	}
	tlsNode := func(f pki.Files) []string {
		return append([]string{"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat"}, f.Args()...)
	}
	for name, args := range map[string][]string{
		"tls missing cert file": tlsNode(pki.Files{CA: n1.CA, Cert: filepath.Join(dir, "none.pem"), Key: n1.Key}),
		"tls missing ca file":   tlsNode(pki.Files{CA: filepath.Join(dir, "none.pem"), Cert: n1.Cert, Key: n1.Key}),
		"tls key not matching":  tlsNode(pki.Files{CA: n1.CA, Cert: n1.Cert, Key: n2.Key}),
		"tls ca not a cert":     tlsNode(pki.Files{CA: n1.Key, Cert: n1.Cert, Key: n1.Key}),
		"tls cert of another":   tlsNode(n2),
		"tls flags apart":       {"--role", "logcoord", "--tls-ca", n1.CA},
		"operator without tls":  {"--role", "logcoord", "--operator-identity", "op"},
		"coordinator cert":      append([]string{"--role", "coordinator", "--transport", "heartbeat"}, n1.Args()...),
		"no role":               {},
		"bad role":              {"--role", "king"},
		"node without id":       {"--role", "node", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat"},
		"bad version":           {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--version", "7", "--transport", "heartbeat"},
		"bad transport":         {"--role", "coordinator", "--transport", "pigeon"},
		"logcoord missing":      {"--role", "coordinator"},
		"bad duration":          {"--role", "logcoord", "--ttl", "-1s"},
		"unknown flag":          {"--role", "logcoord", "--frobnicate"},
		"stray argument":        {"--role", "logcoord", "extra"},
		"bad listen":            {"--role", "logcoord", "--listen", "256.0.0.1:99999"},
		"bad log level":         {"--role", "logcoord", "--log-level", "loud"},
		"unreachable":           {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat"},
	} {
		var stderr bytes.Buffer
		code := run(args, &stderr)
		out := strings.TrimRight(stderr.String(), "\n")
		if code != 2 || out == "" || strings.Contains(out, "\n") || !strings.HasPrefix(out, "drainproofd: ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line", name, code, stderr.String())
		}
	}
}
