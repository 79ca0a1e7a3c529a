package store

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
)

// MemEventStore is an in-memory [DataStore]: it records subscriptions and
// keeps each table's events sorted in memory, for a process that needs no
// durability and for tests (package storetest adds fault switches around
// it). Its zero value is not usable; call [NewMemEventStore].
type MemEventStore struct {
	engine
}

// NewMemEventStore returns an empty, open event store.
func NewMemEventStore(opts ...Option) *MemEventStore {
	return &MemEventStore{engine: newEngine(&memData{tables: make(map[TableID][]Event)}, opts)}
}

// memData keeps each table's events sorted by (CommitTs, Key).
type memData struct {
	mu     sync.RWMutex
	tables map[TableID][]Event
}

func compareEvents(a, b Event) int {
	return cmp.Or(cmp.Compare(a.CommitTs, b.CommitTs), bytes.Compare(a.Key, b.Key))
}

type memWrite struct {
	table TableID
	e     Event
}

type memBatch struct {
	d      *memData
	writes []memWrite
}

func (d *memData) newBatch() rawBatch { return &memBatch{d: d} }

func (b *memBatch) set(table TableID, e Event) error {
	e.Key, e.Value = bytes.Clone(e.Key), bytes.Clone(e.Value)
	b.writes = append(b.writes, memWrite{table, e})
	return nil
}

func (b *memBatch) commit() error {
	b.d.mu.Lock()
	defer b.d.mu.Unlock()
	for _, w := range b.writes {
		evs := b.d.tables[w.table]
		i, found := slices.BinarySearchFunc(evs, w.e, compareEvents)
		if found {
			evs[i] = w.e
		} else {
			evs = slices.Insert(evs, i, w.e)
		}
		b.d.tables[w.table] = evs
	}
	return nil
}

func (b *memBatch) close() error {
	b.writes = nil
	return nil
}

// newIter copies the events of the range: the iterator is a snapshot.
func (d *memData) newIter(table TableID, after, upTo uint64) (rawIter, error) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	evs := d.tables[table]
	lo, hi := firstAfter(evs, after), firstAfter(evs, upTo)
	if hi < lo {
		hi = lo
	}
	return &memIter{evs: slices.Clone(evs[lo:hi]), i: -1}, nil
}

// firstAfter returns the index of the first of the sorted evs with a
// commit timestamp above ts.
func firstAfter(evs []Event, ts uint64) int {
	i, _ := slices.BinarySearchFunc(evs, ts, func(e Event, ts uint64) int {
		if e.CommitTs <= ts {
			return -1
		}
		return 1
	})
	return i
}

func (d *memData) close() error { return nil }

type memIter struct {
	evs []Event
	i   int
}

func (it *memIter) next() bool {
	it.i++
	return it.i < len(it.evs)
}

func (it *memIter) event() Event {
	e := it.evs[it.i]
	e.Key, e.Value = bytes.Clone(e.Key), bytes.Clone(e.Value)
	return e
}

func (it *memIter) err() error   { return nil }
func (it *memIter) close() error { it.evs = nil; return nil }
