package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
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
		"trace without model":   {"--role", "logcoord", "--trace", filepath.Join(dir, "t1"), "--trace-node", "n1"},
		"trace without node":    {"--role", "logcoord", "--trace", filepath.Join(dir, "t2"), "--trace-model", "{}"},
		"trace model not json":  {"--role", "logcoord", "--trace", filepath.Join(dir, "t3"), "--trace-node", "n1", "--trace-model", "[1"},
		"trace flag alone":      {"--role", "logcoord", "--trace-node", "n1"},
		"trace node on a node":  {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat", "--trace", filepath.Join(dir, "t4"), "--trace-model", "{}", "--trace-node", "n1"},
		"trace after missing":   {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat", "--trace", filepath.Join(dir, "t5"), "--trace-model", "{}", "--trace-after", filepath.Join(dir, "none")},
		"trace bad process":     {"--role", "logcoord", "--trace", filepath.Join(dir, "t6"), "--trace-node", "n1", "--trace-model", "{}", "--trace-process", "a b"},
		"trace coord upgraded":  {"--role", "coordinator", "--transport", "heartbeat", "--trace", filepath.Join(dir, "t7"), "--trace-node", "n1", "--trace-model", "{}", "--trace-after", filepath.Join(dir, "t1"), "--trace-restart", "upgrade"},
		"trace lc upgraded":     {"--role", "logcoord", "--trace", filepath.Join(dir, "t11"), "--trace-node", "n1", "--trace-model", "{}", "--trace-after", filepath.Join(dir, "t1"), "--trace-restart", "upgrade"},
		"trace restart alone":   {"--role", "logcoord", "--trace", filepath.Join(dir, "t8"), "--trace-node", "n1", "--trace-model", "{}", "--trace-restart", "crash"},
		"trace bad restart":     {"--role", "node", "--id", "n1", "--coordinator", addr, "--data-dir", dir, "--transport", "heartbeat", "--trace", filepath.Join(dir, "t9"), "--trace-model", "{}", "--trace-after", filepath.Join(dir, "t1"), "--trace-restart", "reboot"},
		"trace bad mapping":     {"--role", "logcoord", "--trace", filepath.Join(dir, "t10"), "--trace-node", "n1", "--trace-model", "{}", "--trace-mapping", "magic"},
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

// TestLastStamp: a predecessor's trace gives its process and the clock
// of its last complete line; a line torn by a kill is not counted, and a
// file that is not a process's trace is an error.
func TestLastStamp(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	hdr := `{"drainproof_trace":2,"model":{},"process":"n1"}` + "\n"
	line := func(c int) string { return fmt.Sprintf(`{"p":"n1","c":%d,"action":"NodeStartHeartbeat"}`, c) + "\n" }
	for _, tc := range []struct {
		name, body string
		clock      uint64
		bad        bool
	}{
		{"empty-trace", hdr, 0, false},
		{"lines", hdr + line(1) + line(4), 4, false},
		{"torn", hdr + line(1) + line(7) + `{"p":"n1","c":9,"act`, 7, false},
		{"no-process", `{"drainproof_trace":2,"model":{}}` + "\n", 0, true},
		{"unstamped", hdr + `{"action":"NodeStartHeartbeat"}` + "\n", 0, true},
		{"nothing", "", 0, true},
	} {
		proc, clock, err := lastStamp(write(tc.name, tc.body))
		if tc.bad {
			if err == nil {
				t.Errorf("%s: no error", tc.name)
			}
			continue
		}
		if err != nil || proc != "n1" || clock != tc.clock {
			t.Errorf("%s: %q %d %v, want n1 %d", tc.name, proc, clock, err, tc.clock)
		}
	}
}
