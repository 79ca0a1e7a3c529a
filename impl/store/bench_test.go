package store_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/drainproof/drainproof/impl/store"
)

// openBench opens a store of each kind for a benchmark.
func openBench(b *testing.B, kind string) store.DataStore {
	b.Helper()
	if kind == "memory" {
		return store.NewMemEventStore()
	}
	s, err := store.NewPebbleEventStore("")
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchEvents(from uint64, n int) []store.Event {
	evs := make([]store.Event, n)
	for i := range evs {
		ts := from + uint64(i)
		evs[i] = store.Event{CommitTs: ts, Key: fmt.Appendf(nil, "row%08d", ts%1000), Value: make([]byte, 64)}
	}
	return evs
}

// BenchmarkWrite is the write path: WriteEvents of one table, one event
// per batch against 64 and 512 events per batch; events/s is the figure.
//
//	go test -run '^$' -bench Write -benchtime 2s ./impl/store
func BenchmarkWrite(b *testing.B) {
	for _, kind := range []string{"pebble", "memory"} {
		for _, batch := range []int{1, 64, 512} {
			b.Run(fmt.Sprintf("%s/batch=%d", kind, batch), func(b *testing.B) {
				s := openBench(b, kind)
				defer s.Close()
				ts := uint64(1)
				events := 0
				for b.Loop() {
					if err := s.WriteEvents(1, benchEvents(ts, batch)); err != nil {
						b.Fatal(err)
					}
					ts += uint64(batch)
					events += batch
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// BenchmarkRead is the read path: a subscription reads a table of 100,000
// events through its iterator; events/s is the figure.
//
//	go test -run '^$' -bench Read -benchtime 20x ./impl/store
func BenchmarkRead(b *testing.B) {
	const n = 100_000
	for _, kind := range []string{"pebble", "memory"} {
		b.Run(kind, func(b *testing.B) {
			s := openBench(b, kind)
			defer s.Close()
			for ts := uint64(1); ts <= n; ts += 1000 {
				if err := s.WriteEvents(1, benchEvents(ts, 1000)); err != nil {
					b.Fatal(err)
				}
			}
			s.RegisterDispatcher("d", store.Subscription{Table: 1}, store.NotifierFunc(func() {}))
			events := 0
			for b.Loop() {
				err := store.ReadEvents(s, "d", 0, math.MaxUint64, func(store.Event) bool { events++; return true })
				if err != nil {
					b.Fatal(err)
				}
			}
			if events != n*b.N {
				b.Fatalf("read %d events, want %d", events, n*b.N)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}
