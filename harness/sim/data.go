package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/drainproof/drainproof/impl/retry"
	"github.com/drainproof/drainproof/impl/store"
	"github.com/drainproof/drainproof/impl/store/storetest"
)

// StoreKind selects the event store of T's processes.
type StoreKind string

// The event stores.
const (
	// StoreMemory is an in-memory store (store.MemEventStore; the default).
	StoreMemory StoreKind = "memory"
	// StorePebble is store.PebbleEventStore, one temporary directory per
	// process, removed when the process stops.
	StorePebble StoreKind = "pebble"
)

// ParseStore returns the StoreKind named s ("memory" or "pebble").
func ParseStore(s string) (StoreKind, error) {
	switch k := StoreKind(s); k {
	case StoreMemory, StorePebble:
		return k, nil
	}
	return "", fmt.Errorf("sim: unknown store %q (want memory or pebble)", s)
}

// eventStore is T's event store, memory or Pebble, with the test kit's
// fault switches around it.
type eventStore = *storetest.EventStore

func newEventStore(kind StoreKind) (eventStore, error) {
	if kind == StorePebble {
		// T's store at start-up, retried as a store creation is (package
		// retry): an open that fails transiently does not fail the start.
		return storetest.OpenPebbleEventStore(context.Background(), "", store.WithOpenRetry(retry.Policy{MaxAttempts: 3}))
	}
	return storetest.NewMemEventStore(), nil
}

// DrainRef names a completed drain: its number in the run (1-based), the
// epoch of the process it declared drained, and the step of the restart
// it authorised.
type DrainRef struct {
	Number int
	Epoch  uint64
	Step   int
}

// String renders d like "drain 2 (epoch 3, restart at step 456)".
func (d DrainRef) String() string {
	return fmt.Sprintf("drain %d (epoch %d, restart at step %d)", d.Number, d.Epoch, d.Step)
}

// delivery is one entry of a changefeed table's reception log: an event
// received (ts), or a recovery after a crash (resume), from which events
// up to dupUpTo may arrive again.
type delivery struct {
	ts      uint64
	resume  bool
	dupUpTo uint64
}

// skip is a range of a table's events a dispatcher jumped over: (from,
// to], when a restart authorised by drain cut its stream.
type skip struct {
	from, to uint64
	drain    DrainRef
}

// feedTable is one table of the changefeed: what was committed upstream,
// what T's current process pulled, and what the changefeed's dispatcher
// for it received.
type feedTable struct {
	committed []uint64 // commit timestamps, increasing
	pulled    int      // committed[:pulled] are in T's current store
	// pos is the dispatcher's read position (the last commit ts it read
	// past); checkpoint is its sink's checkpoint: every event up to it was
	// received. A crash resumes from checkpoint, so events in
	// (checkpoint, pos] may come again.
	pos, checkpoint uint64
	log             []delivery
	skips           []skip
}

// dataPlane is the changefeed's data: producers commit change events to
// the upstream tables of the ordinary dispatchers (one table each, one
// global commit-ts clock), T's puller writes each table's events into
// T's event store of the table's upstream cluster (one per cluster, see
// [ClusterConfig.Clusters]) and advances its resolved timestamps, and the
// changefeed's dispatchers read them: through that event store (their
// subscription, made by the cluster's broker in T) while the collectors
// hold them registered with T, otherwise from another node, which the
// simulator does not model and reads the upstream log.
//
// Failure semantics, a decision of the simulator: a crash of T is seen by
// the collectors, which resume each dispatcher of T from its sink's
// checkpoint (a re-delivery, deduplicated by commit ts); a restart that a
// completed drain authorised is, by the drain's contract, one no stream
// depends on, so nobody recovers a dispatcher that was still registered
// with T: it resumes at the table's current commit ts, and the events it
// had not read are lost. A broken stream therefore shows as lost events,
// attributed to the drain.
type dataPlane struct {
	tso    uint64
	tables []feedTable // index: ordinary dispatcher d
	// authorised is the drain of the restart under way, nil for a crash.
	authorised *DrainRef
}

func newDataPlane(ordinary int) *dataPlane {
	return &dataPlane{tables: make([]feedTable, ordinary)}
}

// ordinary returns the number of ordinary dispatchers (one table each).
func (c *Cluster) ordinary() int { return c.cfg.Dispatchers - c.cfg.TableTriggers }

// startTs is where dispatcher d's subscription starts: its read position.
func (c *Cluster) startTs(d int) uint64 {
	if c.isTT(d) {
		return 0
	}
	return c.data.tables[d].pos
}

// Commit commits one change event to dispatcher d's table upstream and
// returns its commit ts. T's puller writes it into the event store of
// d's cluster in T at its next Pull.
func (c *Cluster) Commit(d int) uint64 {
	c.data.tso++
	t := &c.data.tables[d]
	t.committed = append(t.committed, c.data.tso)
	return c.data.tso
}

// Pull is T's puller: it writes the committed events T's stores do not
// hold, each table's into the event store of its cluster, at most batch
// per table in one batch each (batch < 1: all), and, once a table is
// caught up, advances its resolved ts to the upstream commit ts. A write that fails with an injected fault
// ([Cluster.InjectStoreFault]) is retried at the next Pull: the table is
// skipped and the error, returned after the other tables, wraps
// storetest.ErrInjectedFault.
func (c *Cluster) Pull(batch int) error {
	var injected error
	for d := range c.data.tables {
		t := &c.data.tables[d]
		es, _ := c.stores(d)
		n := len(t.committed) - t.pulled
		if batch > 0 {
			n = min(n, batch)
		}
		if n > 0 {
			evs := make([]store.Event, n)
			for i, ts := range t.committed[t.pulled : t.pulled+n] {
				evs[i] = store.Event{CommitTs: ts, Key: fmt.Appendf(nil, "t%d", table(d)), Value: fmt.Appendf(nil, "%d", ts)}
			}
			if err := es.WriteEvents(table(d), evs); errors.Is(err, storetest.ErrInjectedFault) {
				injected = fmt.Errorf("sim: pull: %w", err)
				continue
			} else if err != nil {
				return fmt.Errorf("sim: pull: %w", err)
			}
			t.pulled += n
		}
		if t.pulled == len(t.committed) {
			if err := es.AdvanceResolvedTs(table(d), c.data.tso); err != nil {
				return fmt.Errorf("sim: pull: %w", err)
			}
		}
	}
	return injected
}

// InjectStoreFault makes the next pass through fault point f of each of
// T's event stores (one per upstream cluster) fail
// (storetest.ErrInjectedFault): the puller's write batch, or a dispatcher's
// iterator. The puller and the dispatchers retry.
func (c *Cluster) InjectStoreFault(f store.Fault) {
	for _, es := range c.proc.es {
		es.InjectFault(f, nil)
	}
}

// Consume has the changefeed's dispatcher d read at most limit events
// (limit < 1: all it can): from its subscription in T's event store of
// its cluster if the collectors hold it registered with T, otherwise from
// another node (the upstream log). Reaching the source's resolved ts advances its
// checkpoint. It returns the number of events read; a read that fails
// with an injected fault keeps the events read before it and returns an
// error wrapping storetest.ErrInjectedFault (the dispatcher reads again).
func (c *Cluster) Consume(d, limit int) (int, error) {
	t := &c.data.tables[d]
	if limit < 1 {
		limit = math.MaxInt
	}
	read := 0
	got := func(ts uint64) bool {
		t.log = append(t.log, delivery{ts: ts})
		t.pos = ts
		read++
		return read < limit
	}
	var resolved uint64
	if c.registered[d] {
		es, _ := c.stores(d)
		resolved = es.ResolvedTs(table(d))
		err := store.ReadEvents(es, Dispatcher(d), t.pos, resolved, func(e store.Event) bool { return got(e.CommitTs) })
		if err != nil {
			return read, fmt.Errorf("sim: dispatcher %s reads T's store: %w", Dispatcher(d), err)
		}
	} else {
		resolved = c.data.tso
		i, _ := slices.BinarySearch(t.committed, t.pos+1)
		for _, ts := range t.committed[i:] {
			if !got(ts) {
				break
			}
		}
	}
	if read < limit { // reached the resolved ts
		t.pos, t.checkpoint = max(t.pos, resolved), max(t.checkpoint, resolved)
	}
	return read, nil
}

// RestartDrained restarts T as the upgrade controller does once drain
// completed: the dispatchers still registered with T lose the events they
// had not read (see dataPlane). It returns the broken streams.
func (c *Cluster) RestartDrained(drain DrainRef) (int, error) {
	c.data.authorised = &drain
	defer func() { c.data.authorised = nil }()
	return c.Restart()
}

// cutStreams runs when T's process ends: each dispatcher registered with
// it resumes from its checkpoint after a crash, or, after a restart a
// drain authorised, skips to the current commit ts.
func (c *Cluster) cutStreams() {
	for d := range c.data.tables {
		if !c.registered[d] {
			continue
		}
		t := &c.data.tables[d]
		if a := c.data.authorised; a != nil {
			if c.data.tso > t.pos {
				t.skips = append(t.skips, skip{from: t.pos, to: c.data.tso, drain: *a})
			}
			t.pos, t.checkpoint = max(t.pos, c.data.tso), max(t.checkpoint, c.data.tso)
			continue
		}
		t.log = append(t.log, delivery{resume: true, dupUpTo: t.pos})
		t.pos = t.checkpoint
	}
}

// attachStore is the new process's puller catching up: its store starts
// empty, so every table is pulled again from the start.
func (c *Cluster) attachStore() {
	for d := range c.data.tables {
		c.data.tables[d].pulled = 0
	}
}

// Delivery is the end-to-end check of the changefeed's data: per table,
// every committed event (the changefeed starts at 0) received, in commit
// order, once, except re-deliveries after a crash.
type Delivery struct {
	Committed   int `json:"events_committed"`
	Received    int `json:"events_received"`
	Lost        int `json:"events_lost"`
	Duplicated  int `json:"events_duplicated"`
	OutOfOrder  int `json:"events_out_of_order"`
	Redelivered int `json:"events_redelivered"`
	// FirstLost names the lost event of lowest commit ts, and the drain
	// whose restart skipped it: "table 2 commit ts 57, lost by drain 1
	// (epoch 1, restart at step 300)".
	FirstLost string `json:"first_lost,omitempty"`
}

// checkTable checks one table's reception log against its committed
// events and returns the counts and its lost commit timestamps.
func checkTable(committed []uint64, log []delivery) (Delivery, []uint64) {
	var r Delivery
	r.Committed = len(committed)
	seen := make(map[uint64]bool, len(committed))
	var maxSeen, dupOK uint64
	for _, e := range log {
		if e.resume {
			dupOK = max(dupOK, e.dupUpTo)
			continue
		}
		r.Received++
		switch {
		case seen[e.ts] && e.ts <= dupOK:
			r.Redelivered++
		case seen[e.ts]:
			r.Duplicated++
		case e.ts < maxSeen:
			r.OutOfOrder++
		}
		seen[e.ts] = true
		maxSeen = max(maxSeen, e.ts)
	}
	var lost []uint64
	for _, ts := range committed {
		if !seen[ts] {
			lost = append(lost, ts)
		}
	}
	r.Lost = len(lost)
	return r, lost
}

// Check drains the pipeline (everything committed is pulled and read)
// and checks what the changefeed received against what was committed.
func (c *Cluster) Check() (Delivery, error) {
	if err := retryInjected(func() error { return c.Pull(0) }); err != nil {
		return Delivery{}, err
	}
	var total Delivery
	firstTs := uint64(math.MaxUint64)
	for d := range c.data.tables {
		if err := retryInjected(func() error { _, err := c.Consume(d, 0); return err }); err != nil {
			return total, err
		}
		t := &c.data.tables[d]
		r, lost := checkTable(t.committed, t.log)
		total.add(r)
		if len(lost) > 0 && lost[0] < firstTs {
			firstTs = lost[0]
			total.FirstLost = fmt.Sprintf("table %d commit ts %d, lost by %s", table(d), lost[0], t.lostBy(lost[0]))
		}
	}
	return total, nil
}

// retryInjected calls fn again while it fails with an injected fault;
// each injected fault fires once, so this ends.
func retryInjected(fn func() error) error {
	for {
		if err := fn(); !errors.Is(err, storetest.ErrInjectedFault) {
			return err
		}
	}
}

// lostBy names the drain whose restart skipped ts.
func (t *feedTable) lostBy(ts uint64) string {
	i := slices.IndexFunc(t.skips, func(s skip) bool { return s.from < ts && ts <= s.to })
	if i < 0 {
		return "no drain (unexplained)"
	}
	return t.skips[i].drain.String()
}

func (r *Delivery) add(o Delivery) {
	r.Committed += o.Committed
	r.Received += o.Received
	r.Lost += o.Lost
	r.Duplicated += o.Duplicated
	r.OutOfOrder += o.OutOfOrder
	r.Redelivered += o.Redelivered
	r.FirstLost = cmp.Or(r.FirstLost, o.FirstLost)
}
