package eventservice

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// Config.QueueSize bounds the requests waiting, not the one running: while
// the loop is held in a store, QueueSize requests queue without waiting,
// the next Submit waits for room (and gives up with its context), and a Do
// with a cancellable context gives up too; once the store returns, every
// queued request runs, in order (R7).
func TestQueueBoundsWaitingRequests(t *testing.T) {
	const size = 4
	h := newHarness(t, func(c *Config) { c.QueueSize = size })
	gate := h.schemaStore("c1").BlockRegisterTable()
	defer gate.Release() // unblock the loop if the test fails
	bg := context.Background()
	require.NoError(t, h.svc.Submit(bg, reg("d0", 1)))
	<-gate.Entered() // the loop runs d0's registration, held in RegisterTable
	h.schemaStore("c1").Unblock()

	// size requests wait: a register, a remove and a register of d1, and
	// a remove of an unknown dispatcher.
	for _, req := range []Request{reg("d1", 2), rem("c1", "d1"), reg("d1", 3), rem("c1", "nobody")} {
		ctx, cancel := context.WithTimeout(bg, 10*time.Second)
		require.NoError(t, h.svc.Submit(ctx, req), "room for QueueSize waiting requests")
		cancel()
	}
	ctx, cancel := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.svc.Submit(ctx, rem("c1", "d1")), context.DeadlineExceeded, "a full queue makes Submit wait")
	ctx2, cancel2 := context.WithTimeout(bg, 20*time.Millisecond)
	defer cancel2()
	require.ErrorIs(t, h.svc.Do(ctx2, rem("c1", "d1")), context.DeadlineExceeded, "a Do finds the queue full and gives up")
	require.Equal(t, int64(1), h.count(), "R2: d0 counted while its RegisterTable is held")

	// An uncancellable Do waits for the loop and runs after the queue.
	done := make(chan error, 1)
	go func() { done <- h.svc.Do(bg, reg("d2", 4)) }()
	gate.Release()
	require.NoError(t, <-done)
	snap := h.snapshot()
	require.Len(t, snap.Brokers, 1)
	var ids []DispatcherID
	for _, d := range snap.Brokers[0].Dispatchers {
		ids = append(ids, d.ID)
	}
	require.Equal(t, []DispatcherID{"d0", "d1", "d2"}, ids, "the queued requests ran in arrival order")
	require.Equal(t, TableID(3), snap.Brokers[0].Dispatchers[1].Table, "d1 is its second registration")
	require.Equal(t, int64(3), h.count())
	h.checkQuiescent()
}

// R7: a Do that runs on its caller's goroutine (the loop idle) first runs
// the requests queued before it. The Run goroutine is kept out of the way:
// the test gives the service Run's context itself, so that queued requests
// wait for the Do.
func TestInlineDoRunsQueuedRequestsFirst(t *testing.T) {
	es, ss := storetest.NewMemEventStore(), storetest.NewMemSchemaStore()
	svc, err := New(Config{NewStores: func(ClusterID) (store.EventStore, store.SchemaStore) { return es, ss }})
	require.NoError(t, err)
	bg := context.Background()
	require.NoError(t, svc.Submit(bg, reg("d1", 1)))
	require.NoError(t, svc.Submit(bg, rem("c1", "d1")))
	require.NoError(t, svc.Submit(bg, reg("d1", 2)))
	require.Zero(t, es.Registers(), "nothing runs before Run")

	svc.exec.Lock()
	svc.loopCtx = bg // what Run does first
	svc.live.Store(true)
	svc.exec.Unlock()
	require.NoError(t, svc.Do(bg, rem("c1", "d1")))
	require.False(t, svc.q.waiting(), "the Do ran the queue")
	require.Equal(t, 2, es.Registers())
	require.False(t, es.Subscribed("d1"), "R7: REGISTER, REMOVE, REGISTER, then the Do's REMOVE")
	count, _ := svc.Sample()
	require.Zero(t, count)
	require.Equal(t, 0, ss.Refs(2))
}

// A Do whose context is already done runs nothing.
func TestDoWithDoneContext(t *testing.T) {
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, h.svc.Do(ctx, reg("d1", 1)), context.Canceled)
	_, err := h.svc.Snapshot(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, h.count())
	require.Empty(t, h.snapshot().Brokers, "no broker was created")
}

// panickySchemaStore panics in RegisterTable.
type panickySchemaStore struct{ *storetest.MemSchemaStore }

func (panickySchemaStore) RegisterTable(context.Context, TableID, uint64) error {
	panic("schema store bug")
}

// A panic in a store call ends the process, whichever goroutine runs the
// request: a Do that ran it on its own goroutine and was recovered by its
// caller, or the Run goroutine (run by a caller that recovers it too).
// Recovering it would leave callers waiting for requests that never run,
// the loop's baton held, or the registry half-way through a request.
// Checked in child processes, which must die with the panic's message.
func TestStorePanicEndsProcess(t *testing.T) {
	if mode := os.Getenv("EVENTSERVICE_PANIC_CHILD"); mode != "" {
		h := newHarness(t, func(c *Config) {
			c.NewStores = func(ClusterID) (store.EventStore, store.SchemaStore) {
				return storetest.NewMemEventStore(), panickySchemaStore{storetest.NewMemSchemaStore()}
			}
		})
		require.NoError(t, h.do(rem("c1", "nobody"))) // Run is running
		func() {
			defer func() { _ = recover() }()
			if mode == "do" {
				_ = h.do(reg("d1", 1)) // runs on this goroutine: the loop is idle
			} else {
				require.NoError(t, h.svc.Submit(context.Background(), reg("d1", 1)))
				_, _ = h.svc.Snapshot(context.Background()) // waits for the Run goroutine
			}
		}()
		t.Fatal("the process survived a panic in a store call")
	}
	for _, mode := range []string{"do", "submit"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestStorePanicEndsProcess$", "-test.timeout=60s")
			cmd.Env = append(os.Environ(), "EVENTSERVICE_PANIC_CHILD="+mode)
			out, err := cmd.CombinedOutput()
			require.Error(t, err, "the child must exit non-zero")
			require.Contains(t, string(out), "eventservice: panic while running a request: schema store bug")
			require.NotContains(t, string(out), "the process survived")
		})
	}
}

// Requests that wait for room in a full queue (two of them) go in once
// the loop takes the queue, and run: none is left waiting.
func TestWaitersForRoomGetIn(t *testing.T) {
	const size = 2
	h := newHarness(t, func(c *Config) { c.QueueSize = size })
	gate := h.schemaStore("c1").BlockRegisterTable()
	defer gate.Release() // unblock the loop if the test fails
	bg := context.Background()
	require.NoError(t, h.svc.Submit(bg, reg("d0", 1)))
	<-gate.Entered() // the loop is held in d0's RegisterTable
	h.schemaStore("c1").Unblock()
	for i := range size {
		require.NoError(t, h.svc.Submit(bg, reg(DispatcherID(fmt.Sprintf("q%d", i)), TableID(10+i))))
	}
	done := make(chan error, 2)
	for i := range 2 {
		go func() { done <- h.svc.Submit(bg, reg(DispatcherID(fmt.Sprintf("w%d", i)), TableID(20+i))) }()
	}
	time.Sleep(50 * time.Millisecond) // let both wait for room (if they did not yet, they find it later)
	gate.Release()
	for range 2 {
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Fatal("a request waiting for room never got in")
		}
	}
	b, _ := h.broker("c1") // the snapshot runs after every queued request
	require.Len(t, b.Dispatchers, 1+size+2)
	require.Equal(t, int64(1+size+2), h.count())
	h.checkQuiescent()
}

// The queue gives the loop its array back for the next requests: once
// warm, queuing and taking requests allocates nothing.
func TestQueueReusesItsArray(t *testing.T) {
	q := newQueue(8)
	ctx := context.Background()
	cycle := func() {
		for range 4 {
			if err := q.push(ctx, job{}); err != nil {
				t.Fatal(err)
			}
		}
		q.done(q.take())
	}
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
	q.done(q.take()) // an empty queue's nil batch is no array to keep
	cycle()
	require.Zero(t, testing.AllocsPerRun(100, cycle))
}

// goexitSchemaStore ends its caller's goroutine in RegisterTable with
// runtime.Goexit, as a test's t.FailNow inside a store would.
type goexitSchemaStore struct{ *storetest.MemSchemaStore }

func (goexitSchemaStore) RegisterTable(context.Context, TableID, uint64) error {
	runtime.Goexit()
	return nil
}

// A runtime.Goexit in a store call (a test's FailNow) is not a panic: it
// ends only the goroutine of the Do that ran the request, the loop's
// baton is given back, and later requests run; the process goes on.
func TestGoexitInAStoreEndsOnlyItsGoroutine(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.NewStores = func(ClusterID) (store.EventStore, store.SchemaStore) {
			return storetest.NewMemEventStore(), goexitSchemaStore{storetest.NewMemSchemaStore()}
		}
	})
	require.NoError(t, h.do(rem("c1", "nobody"))) // Run is running: a Do runs on its caller's goroutine
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_ = h.svc.Do(context.Background(), reg("d1", 1))
		t.Error("Do returned after its store's Goexit")
	}()
	<-exited
	require.NoError(t, h.do(rem("c1", "nobody")), "the baton was given back")
	_, err := h.svc.Snapshot(context.Background()) // the Run goroutine runs requests too
	require.NoError(t, err)
}
