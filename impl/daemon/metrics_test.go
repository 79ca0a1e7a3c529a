package daemon

import (
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTheHTTPEndpoint: /metrics serves the process's metrics, /healthz
// answers 200 "ok" while the process is healthy and 503 once it is not,
// and a client that does not finish its request header within 5s is
// cut off (a slow client cannot hold a connection).
func TestTheHTTPEndpoint(t *testing.T) {
	m := NewMetrics()
	m.DrainsStarted.Inc()
	var healthy atomic.Bool
	healthy.Store(true)
	l := listen(t)
	h := ServeHTTP(l, m, healthy.Load)
	defer h.Close()
	base := "http://" + l.Addr().String()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "drainproof_drains_started_total 1") {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	if code, body := get("/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Fatalf("/healthz, healthy: %d %q, want 200 \"ok\"", code, body)
	}
	healthy.Store(false)
	if code, _ := get("/healthz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/healthz, not healthy: %d, want 503", code)
	}
	conn, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	if _, err := conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n")); err != nil { // the header never ends
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(start.Add(15 * time.Second))
	_, _ = io.ReadAll(conn) // until the server closes, or the deadline
	if took := time.Since(start); took < 4*time.Second || took > 10*time.Second {
		t.Fatalf("a request header left unfinished: the connection ended after %v, want 5s", took)
	}
}
