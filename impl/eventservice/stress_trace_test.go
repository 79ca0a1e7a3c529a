package eventservice

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
	"github.com/drainproof/drainproof/impl/trace"
)

// traceDispatchers are the IDs of the traced stress run: the model's
// dispatchers (at most spec.MaxDispatchers); the last two are table
// triggers.
var traceDispatchers = []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"}

// TestStressTrace is a short stress run with a trace (docs/trace.md): 4
// goroutines register (Do and Submit; some refused by the event store,
// some failing RegisterTable, per table), remove, reset, heartbeat and run
// the inactivity cleanup on the 8 dispatchers of one cluster, and the
// service traces every model action from its request loop. The trace must
// be a behaviour of the model (tla/DrainRegistration.tla). Reports and the
// admission close are left out: the model has one reporter and closes
// admission only once T is STOPPING, and several goroutines' reports
// would not be in the order of their reads. DRAINPROOF_TRACE=FILE keeps
// the trace.
func TestStressTrace(t *testing.T) {
	var buf bytes.Buffer
	tw, err := trace.NewWriter(&buf, trace.Header{Source: "eventservice TestStressTrace", Model: map[string]any{
		"Dispatchers": traceDispatchers, "TableTriggers": traceDispatchers[6:], "Brokers": []string{"c1"},
		"Versions": []string{"new"}, "MaxEpoch": 15, "MaxReg": 15,
		"MaxMsgs": 8, "Transport": "heartbeat", "Bugs": []string{}}})
	require.NoError(t, err)
	h := newHarness(t, func(c *Config) {
		c.InactivityTimeout = time.Minute
		c.Tracer = tw
	})
	h.schemaStore("c1").FailIf(func(tbl TableID, _ uint64) bool { return tbl == 3 }, nil)
	h.eventStore("c1").Refuse(func(_ DispatcherID, s store.Subscription) bool { return s.Table == 5 })
	const workers, ops = 4, 400
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(7, uint64(w)))
			for range ops {
				n := rng.IntN(len(traceDispatchers))
				id := DispatcherID(traceDispatchers[n])
				switch op := rng.IntN(10); {
				case op < 4:
					req := Request{Action: Register, Cluster: "c1", Changefeed: ChangefeedID(fmt.Sprintf("cf%d", n%3)),
						Dispatcher: id, Table: TableID(n + 1), StartTs: 1, TableTrigger: n >= 6}
					if rng.IntN(2) == 0 {
						_ = h.svc.Do(ctx, req)
					} else {
						_ = h.svc.Submit(ctx, req)
					}
				case op < 7:
					_ = h.svc.Submit(ctx, rem("c1", id))
				case op < 8:
					_ = h.svc.Do(ctx, reset("c1", id, uint64(1+rng.IntN(3)), 2))
				case op < 9:
					_, _ = h.svc.Heartbeat(ctx, Heartbeat{Cluster: "c1", Progress: []Progress{{Dispatcher: id, Epoch: 1, CheckpointTs: 5}}})
				default:
					if w == 1 {
						h.advance(30 * time.Second)
						_, _ = h.svc.Cleanup(ctx)
					}
				}
			}
		})
	}
	wg.Wait()
	_ = h.snapshot() // every queued request has run
	require.NoError(t, tw.Close())
	if f := os.Getenv("DRAINPROOF_TRACE"); f != "" {
		require.NoError(t, os.WriteFile(f, buf.Bytes(), 0o644))
	}
	res, err := tracecheck.CheckBytes(buf.Bytes(), "stress", nil, tracecheck.Options{})
	require.NoError(t, err)
	require.Equal(t, tracecheck.OK, res.Verdict, "line %d: %s\n%s\n%+v", res.Line, res.Reason, res.Text, res.Candidates)
	require.Greater(t, res.Lines, 300)
}

// A traced service writes the same lines whether or not a test's hook is
// set (the product never sets one): a registration, a reset and a
// removal, each a model action with its line.
func TestTraceWithoutAHook(t *testing.T) {
	run := func(hooked bool) string {
		var buf bytes.Buffer
		tw, err := trace.NewWriter(&buf, trace.Header{Source: "eventservice TestTraceWithoutAHook", Model: map[string]any{
			"Dispatchers": []string{"d1"}, "TableTriggers": []string{}, "Brokers": []string{"c1"},
			"Versions": []string{"new"}, "MaxEpoch": 2, "MaxReg": 2, "MaxMsgs": 2, "Transport": "heartbeat", "Bugs": []string{}}})
		require.NoError(t, err)
		cfg := func(c *Config) { c.Tracer = tw }
		var svc *Service
		if hooked {
			svc = newHarness(t, cfg).svc
		} else {
			c := Config{NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) {
				return storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
			}}
			cfg(&c)
			svc, err = New(c)
			require.NoError(t, err)
			ctx, cancel := context.WithCancel(context.Background())
			wait := svc.Start(ctx)
			defer func() { cancel(); _ = wait() }()
		}
		ctx := context.Background()
		require.NoError(t, svc.Do(ctx, reg("d1", 1)))
		require.NoError(t, svc.Do(ctx, reset("c1", "d1", 1, 100)))
		require.NoError(t, svc.Do(ctx, rem("c1", "d1")))
		require.NoError(t, tw.Close())
		return buf.String()
	}
	plain := run(false)
	for _, action := range []string{"BrokerAdmit", "BrokerRegisterTable", "CollectorRemove", "BrokerRemoveFinish"} {
		require.Contains(t, plain, `"`+action+`"`)
	}
	require.Equal(t, run(true), plain)
}
