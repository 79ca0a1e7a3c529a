package store_test

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainproof/drainproof/impl/store"
)

// batchEvents is batch b of the kill test: k events of table 1 at commit
// ts b, keys 0..k-1.
func batchEvents(b uint64, k int) []store.Event {
	evs := make([]store.Event, k)
	for i := range evs {
		evs[i] = store.Event{CommitTs: b, Key: []byte(fmt.Sprintf("k%04d", i)), Value: make([]byte, 512)}
	}
	return evs
}

// readAll returns table 1's events by commit ts.
func readAll(t *testing.T, s *store.PebbleEventStore) map[uint64]int {
	t.Helper()
	if !s.RegisterDispatcher("reader", store.Subscription{Table: 1}, store.NotifierFunc(func() {})) {
		t.Fatal("register refused")
	}
	got := map[uint64]int{}
	if err := store.ReadEvents(s, "reader", 0, math.MaxUint64, func(e store.Event) bool { got[e.CommitTs]++; return true }); err != nil {
		t.Fatal(err)
	}
	s.UnregisterDispatcher("reader")
	return got
}

// TestPebbleDurableAcrossClose: events committed before a clean Close are
// there after a reopen of the same directory (with the WAL off and no
// flush at Close, they were not).
func TestPebbleDurableAcrossClose(t *testing.T) {
	dir := t.TempDir()
	s, err := store.NewPebbleEventStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	for b := uint64(1); b <= 20; b++ {
		if err := s.WriteEvents(1, batchEvents(b, 10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = store.OpenPebbleEventStore(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readAll(t, s)
	for b := uint64(1); b <= 20; b++ {
		if got[b] != 10 {
			t.Fatalf("batch %d: %d of 10 events after a clean close and reopen", b, got[b])
		}
	}
}

// killChildEnv makes the test binary the kill test's writer.
const killChildEnv = "DRAINPROOF_PEBBLE_KILL_CHILD"

// TestPebbleKillMidBatch: a process writing large batches is SIGKILLed
// while it writes; after a reopen every batch is complete or absent, and
// every batch it acknowledged (printed after the commit returned) is
// complete.
func TestPebbleKillMidBatch(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		killChild(dir)
		return
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for round := range 3 {
		dir := t.TempDir()
		cmd := exec.Command(os.Args[0], "-test.run=^TestPebbleKillMidBatch$")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		acked := uint64(0)
		killAt := uint64(5 + 7*round)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "acked "); ok {
				acked, _ = strconv.ParseUint(v, 10, 64)
				if acked >= killAt {
					break
				}
			}
		}
		// Mid-batch: the writer is always inside a WriteEvents of a
		// 2,000-event batch or about to start one.
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		if acked < killAt {
			t.Fatalf("round %d: the writer stopped at batch %d before the kill", round, acked)
		}
		s, err := store.OpenPebbleEventStore(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		got := readAll(t, s)
		_ = s.Close()
		for b, n := range got {
			if n != killBatch {
				t.Errorf("round %d: batch %d has %d of %d events after the kill: a half batch", round, b, n, killBatch)
			}
		}
		for b := uint64(1); b <= acked; b++ {
			if got[b] != killBatch {
				t.Errorf("round %d: acknowledged batch %d lost (%d events)", round, b, got[b])
			}
		}
	}
}

const killBatch = 2000

// killChild writes batches to a store in dir until it is killed.
func killChild(dir string) {
	s, err := store.NewPebbleEventStore(dir)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(3)
	}
	deadline := time.Now().Add(30 * time.Second)
	for b := uint64(1); time.Now().Before(deadline); b++ {
		if err := s.WriteEvents(1, batchEvents(b, killBatch)); err != nil {
			fmt.Println("error", err)
			os.Exit(3)
		}
		fmt.Printf("acked %d\n", b)
	}
	os.Exit(4) // never killed
}
