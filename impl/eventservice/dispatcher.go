package eventservice

import (
	"runtime"
	"sync/atomic"
)

// This file is one registration: the dispatcher the broker publishes and
// the event store notifies, its stat per epoch, and its removed mark.

// stat is one epoch of a dispatcher's registration (upstream
// dispatcherStat). A reset replaces it under the same *dispatcher by
// compare-and-swap; the old one is marked removed (R5).
//
// removed and handshaked are read by Notify on event-store goroutines,
// hence atomic. checkpointTs and lastHeartbeat belong to the request loop:
// only its steps (newDispatcher, heartbeat, reset, inactive, snapshot)
// read or write them. Under the tag bugs, where the DoubleDecrement bug
// runs the inactivity cleanup beside the loop, heartbeat writes them
// under b.mu, which inactive holds (see [broker.loopLock]); a new stat is
// written before it is published (by the published map or by d.stat).
type stat struct {
	epoch   uint64
	startTs uint64

	removed       atomic.Bool
	handshaked    atomic.Bool
	checkpointTs  uint64 // request loop
	lastHeartbeat int64  // request loop; unix nanoseconds
}

// dispatcher is one registration: the stable pointer the published map and the
// event store (as its notifier) hold for the life of the registration.
//
// A broker reuses a released dispatcher for a later registration
// (recycle, newDispatcher), so that a registration does not allocate. An
// event store may still be calling the notifier of the earlier
// registration (a call under way when UnregisterDispatcher returned), so
// every registration gets a new generation, which is the token of its
// subscription, and Notify acts only for the current generation (R4, R5).
//
// nstate orders Notify, which runs on event-store goroutines, with the
// removal and the reuse of d, like a reader-writer lock whose write side
// is taken by the removal and given back by the reuse: it counts the
// Notify calls reading d's fields, or is released once d is removed
// (markRemoved waits for the readers, then sets it). A Notify that finds
// d released drops the call, so while d is released its fields belong to
// the request loop, which rewrites them for the reuse and then opens
// nstate again. A removal and a reuse cost one atomic step each.
type dispatcher struct {
	nstate atomic.Int32 // Notify calls reading d, or released
	gen    uint64       // d's generation: written only while released

	b            *broker
	id           DispatcherID
	changefeed   ChangefeedID
	tableTrigger bool
	table        TableID
	topic        string
	stat         atomic.Pointer[stat]

	// first is the registration's first stat, allocated with d.
	first stat
	// cf is d's changefeed status while d is counted in it (b.mu).
	cf *changefeedStatus
}

// released is nstate once d is removed.
const released = -1

// markRemoved sets d's removed mark (TLA+ removed[d]): from now on no
// notification acts on d (R4). It waits for the Notify calls reading d's
// fields (a few loads each), and does nothing if d is already marked.
func (d *dispatcher) markRemoved() {
	if !d.nstate.CompareAndSwap(0, released) { // inline: no reader, not marked
		d.markRemovedSlow()
	}
}

// markRemovedSlow is markRemoved when its first compare-and-swap failed.
func (d *dispatcher) markRemovedSlow() {
	for {
		switch n := d.nstate.Load(); n {
		case released:
			return
		case 0:
			if d.nstate.CompareAndSwap(0, released) {
				return
			}
		default:
			runtime.Gosched()
		}
	}
}

// isRemoved reports whether d is marked removed.
func (d *dispatcher) isRemoved() bool { return d.nstate.Load() == released }

// Notify implements [store.Notifier]: d registers itself with the event
// store (no closure to allocate), token being its generation. It runs on
// the event store's goroutines and drops the call if it belongs to an
// earlier registration of a reused d, or once d is marked removed (R4,
// F-R1); otherwise it sends Ready while the epoch is 0, and the
// Handshake of a newer epoch once. The decision is taken as a reader of
// nstate, so that a removal or a reuse of d waits for it and does not
// change the fields read meanwhile; the event goes out after.
func (d *dispatcher) Notify(token uint64) {
	s := d.b.svc // d.b never changes: d is reused by its own broker only
	for {
		n := d.nstate.Load()
		if n == released {
			s.dropped.Add(1)
			return
		}
		if d.nstate.CompareAndSwap(n, n+1) {
			break
		}
	}
	st := d.stat.Load()
	if d.gen != token || st.removed.Load() {
		d.nstate.Add(-1)
		s.dropped.Add(1)
		return
	}
	e := Event{Cluster: d.b.cluster, Dispatcher: d.id, Topic: d.topic}
	switch {
	case st.epoch == 0:
		e.Kind = EventReady
	case !st.handshaked.Swap(true):
		e.Kind, e.Epoch = EventHandshake, st.epoch
	}
	d.nstate.Add(-1)
	if e.Kind != 0 {
		s.emit(e)
	}
}
