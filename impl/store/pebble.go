package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/drainproof/drainproof/impl/retry"
)

// PebbleEventStore is a [DataStore] over a Pebble database, as upstream
// TiCDC's event store is: one key per event, table then commit timestamp
// then row key, so that a table's events are one ordered key range. It
// shares with [MemEventStore] everything but the storage: subscriptions,
// resolved timestamps (kept in memory, as the puller re-sends them after
// a restart), notifications and resource counts. Its zero value is not
// usable; call [NewPebbleEventStore].
type PebbleEventStore struct {
	engine
	dir string
}

// NewPebbleEventStore opens a Pebble event store in dir; with dir "" it
// creates a temporary directory that Close removes.
//
// Durability: what WriteEvents committed survives a clean Close and a
// crash of the process (SIGKILL) and is there when dir is opened again;
// a batch is all or nothing, so a crash in the middle of one leaves none
// of it visible. The write-ahead log is on and each batch's commit waits
// for its fsync (pebble.Sync): a batch is acknowledged only once it is on
// disk. (Upstream's event store runs without a WAL and is a cache that the
// puller refills after a restart; drainproof's daemon has no upstream to
// pull from again, so its store keeps what it acknowledged: see
// docs/cluster.md.) Resolved timestamps are not stored: they start at 0
// after a reopen, as the puller re-sends them.
func NewPebbleEventStore(dir string, opts ...Option) (*PebbleEventStore, error) {
	own := dir == ""
	if own {
		d, err := os.MkdirTemp("", "drainproof-pebble-")
		if err != nil {
			return nil, fmt.Errorf("store: pebble: %w", err)
		}
		dir = d
	}
	// FS is given: Pebble's default wraps it in a disk-health checker
	// whose goroutine only DB.Close stops, so every failed Open leaked it
	// (TestOpenPebbleRetriesTransientFailure under goleak); its reports
	// went to quietLogger anyway.
	db, err := pebble.Open(dir, &pebble.Options{Logger: quietLogger{}, FS: vfs.Default})
	if err != nil {
		if own {
			_ = os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("store: pebble: %w", err)
	}
	return &PebbleEventStore{engine: newEngine(&pebbleData{db: db, dir: dir, own: own}, opts), dir: dir}, nil
}

// OpenPebbleEventStore opens a Pebble event store in dir as
// [NewPebbleEventStore] does, and retries a failed open (package retry:
// the store-creation retry rule, as TiCDC retries its store creation;
// [WithOpenRetry] sets the policy): a directory still locked by the
// process that is shutting down before a restart, say. ctx ends the
// retries.
func OpenPebbleEventStore(ctx context.Context, dir string, opts ...Option) (*PebbleEventStore, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var s *PebbleEventStore
	err := retry.Do(ctx, o.retry, func(context.Context) error {
		var err error
		s, err = NewPebbleEventStore(dir, opts...)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Dir returns the store's directory.
func (s *PebbleEventStore) Dir() string { return s.dir }

// quietLogger drops Pebble's informational messages; errors, which Pebble
// also returns, are dropped too, and a fatal one panics as Pebble's own
// logger would exit.
type quietLogger struct{}

func (quietLogger) Infof(string, ...any)         {}
func (quietLogger) Errorf(string, ...any)        {}
func (quietLogger) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

type pebbleData struct {
	db  *pebble.DB
	dir string
	own bool
}

// The key of an event: 'e', the table (8 bytes, big-endian, sign bit
// flipped so that negative IDs sort first), the commit timestamp (8 bytes,
// big-endian), the row key.
const keyPrefix = 'e'

func tablePrefix(table TableID) []byte {
	b := make([]byte, 9, 17)
	b[0] = keyPrefix
	binary.BigEndian.PutUint64(b[1:], uint64(table)^(1<<63))
	return b
}

func eventKey(table TableID, ts uint64, key []byte) []byte {
	b := binary.BigEndian.AppendUint64(tablePrefix(table), ts)
	return append(b, key...)
}

// prefixEnd returns the first key after every key that starts with p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil // p is all 0xff: no upper bound
}

type pebbleBatch struct{ b *pebble.Batch }

func (d *pebbleData) newBatch() rawBatch { return pebbleBatch{d.db.NewBatch()} }

func (b pebbleBatch) set(table TableID, e Event) error {
	return b.b.Set(eventKey(table, e.CommitTs, e.Key), e.Value, nil)
}

// commit writes the batch to the WAL and waits for its fsync: one WAL
// record, so a crash leaves all of the batch or none of it.
func (b pebbleBatch) commit() error { return b.b.Commit(pebble.Sync) }
func (b pebbleBatch) close() error  { return b.b.Close() }

func (d *pebbleData) newIter(table TableID, after, upTo uint64) (rawIter, error) {
	if after >= upTo {
		return &memIter{i: -1}, nil // the empty range
	}
	lower := binary.BigEndian.AppendUint64(tablePrefix(table), after+1)
	upper := prefixEnd(tablePrefix(table)) // past the table
	if upTo < math.MaxUint64 {
		upper = binary.BigEndian.AppendUint64(tablePrefix(table), upTo+1)
	}
	it, err := d.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return nil, err
	}
	return &pebbleIter{it: it}, nil
}

func (d *pebbleData) close() error {
	err := d.db.Close()
	if d.own {
		err = errors.Join(err, os.RemoveAll(d.dir))
	}
	return err
}

type pebbleIter struct {
	it      *pebble.Iterator
	started bool
}

func (p *pebbleIter) next() bool {
	if !p.started {
		p.started = true
		return p.it.First()
	}
	return p.it.Next()
}

// event returns the current event. A value Pebble cannot read (one kept
// apart from its key, read only now) is kept by the iterator itself: it
// is exhausted and Error returns the failure, so err reports it and the
// next call of next is false (TestPebbleReadFailuresEndTheIteration).
func (p *pebbleIter) event() Event {
	k := p.it.Key()
	v, _ := p.it.ValueAndErr() // the error stays in p.it: see above
	return Event{CommitTs: binary.BigEndian.Uint64(k[9:17]), Key: append([]byte(nil), k[17:]...),
		Value: append([]byte(nil), v...)}
}

func (p *pebbleIter) err() error   { return p.it.Error() }
func (p *pebbleIter) close() error { return p.it.Close() }
