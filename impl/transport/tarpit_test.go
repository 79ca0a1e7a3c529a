package transport

import (
	"fmt"
	"testing"
	"time"
)

// TestAFullTarpitForgetsOnlyPeersIdleOverAMinute: below maxTarpitPeers
// a tarpit forgets no one; once full, a new peer makes it forget the
// peers idle for more than a minute (whose empty buckets are then full
// again), and keep the others: one idle for exactly a minute, one just
// seen.
func TestAFullTarpitForgetsOnlyPeersIdleOverAMinute(t *testing.T) {
	tp := NewTarpit(0.001, 1)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := t0
	tp.now = func() time.Time { return clock }
	drain := func(key string) {
		t.Helper()
		if !tp.limiter(key).Allow() || tp.limiter(key).Allow() {
			t.Fatalf("peer %s: a burst of 1 not spent by two messages", key)
		}
	}
	for i := range maxTarpitPeers - 2 {
		tp.limiter(fmt.Sprintf("old%d", i))
	}
	drain("old0")
	clock = t0.Add(time.Nanosecond)
	drain("edge")
	clock = t0.Add(time.Minute + time.Nanosecond) // old*: idle a minute and a nanosecond; edge: a minute
	drain("recent")
	if n := len(tp.peers); n != maxTarpitPeers {
		t.Fatalf("%d peers remembered of %d, the tarpit not full yet: want all", n, maxTarpitPeers)
	}
	tp.limiter("new")
	if n := len(tp.peers); n != 3 {
		t.Fatalf("a full tarpit took a new peer: %d peers remembered, want 3 (edge, recent, new)", n)
	}
	for _, key := range []string{"edge", "recent"} {
		if tp.limiter(key).Allow() {
			t.Errorf("peer %s was forgotten: its bucket is full again", key)
		}
	}
	if !tp.limiter("old0").Allow() {
		t.Error("peer old0, idle over a minute, was remembered: its bucket is still empty")
	}
}
