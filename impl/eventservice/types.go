package eventservice

import (
	"errors"
	"fmt"
	"time"

	"github.com/drainproof/drainproof/impl/store"
)

// ClusterID identifies an upstream cluster; the service keeps one broker
// per cluster.
type ClusterID string

// ChangefeedID identifies a changefeed; a broker groups its dispatchers by
// changefeed.
type ChangefeedID string

// DispatcherID identifies a dispatcher (the store package's type).
type DispatcherID = store.DispatcherID

// TableID identifies a table (the store package's type).
type TableID = store.TableID

// Action is what a [Request] asks of the broker.
type Action int8

// The request actions (DispatcherRequest.action_type).
const (
	// Register admits and adds a dispatcher (TLA+ ServiceRecvRegister, BrokerAdmit and the broker steps after it).
	Register Action = iota + 1
	// Remove removes a dispatcher (TLA+ CollectorRemove).
	Remove
	// Reset moves a registered dispatcher to a newer epoch.
	Reset
)

// String returns the action's name.
func (a Action) String() string {
	switch a {
	case Register:
		return "REGISTER"
	case Remove:
		return "REMOVE"
	case Reset:
		return "RESET"
	}
	return fmt.Sprintf("Action(%d)", int8(a))
}

// Request is a collector's dispatcher request to the event service.
// Every request names its Dispatcher and its Cluster; a Register also
// names its Changefeed and, unless it is a TableTrigger, its Table (≥ 1);
// a Reset has an Epoch ≥ 1. Do and Submit return an error wrapping
// ErrBadRequest for a request without them.
// (The fields are ordered so that the small ones share a word: a Request
// is copied into the request queue.)
type Request struct {
	_ struct{}

	// Action is Register, Remove or Reset.
	Action Action
	// TableTrigger marks a table-trigger dispatcher, which touches
	// neither store (Register).
	TableTrigger bool
	// OnlyReuse marks a remote probe: the broker answers NotReusable
	// instead of silently dropping a registration it does not take.
	OnlyReuse bool
	// Cluster selects the broker (required).
	Cluster ClusterID
	// Changefeed is the dispatcher's changefeed (required for Register).
	Changefeed ChangefeedID
	// Dispatcher is the dispatcher's ID (required).
	Dispatcher DispatcherID
	// Table is the dispatcher's table, ≥ 1 (required for Register of an
	// ordinary dispatcher; a table trigger has none).
	Table TableID
	// StartTs is where the dispatcher starts (Register, Reset).
	StartTs uint64
	// Epoch is the collector's epoch for the dispatcher: 0 for Register,
	// at least 1 for Reset.
	Epoch uint64
	// Topic is where answers to the requester go (echoed in [Event]).
	Topic string
}

// EventKind is the kind of an [Event] the service sends to a collector.
//
// EventReady and EventHandshake are sent only when the event store calls
// the dispatcher's notifier ([store.Notifier.Notify], the token of its
// registration), as TiCDC's event store does when data or a resolved
// timestamp arrives: a store that never notifies produces neither, and a
// table trigger, which subscribes to no store, never gets them. They come
// from the store's goroutine, so Config.Emit must be safe for concurrent
// use. EventNotReusable is sent by the request loop itself, while it
// handles the registration.
type EventKind int8

// The event kinds.
const (
	// EventReady tells the collector the dispatcher is registered and
	// waits for a RESET: sent on a store notification while the
	// dispatcher's epoch is 0.
	EventReady EventKind = iota + 1
	// EventNotReusable answers a registration the broker did not take:
	// an OnlyReuse miss, a refusing event store, or closed admission
	// (for a remote probe). Sent by the request loop, no notification
	// needed.
	EventNotReusable
	// EventHandshake starts the stream of a new epoch: sent once per
	// epoch, on the first store notification after a RESET.
	EventHandshake
)

// String returns the event kind's name.
func (k EventKind) String() string {
	switch k {
	case EventReady:
		return "Ready"
	case EventNotReusable:
		return "NotReusable"
	case EventHandshake:
		return "Handshake"
	}
	return fmt.Sprintf("EventKind(%d)", int8(k))
}

// Event is a message from the service to a collector.
type Event struct {
	Kind       EventKind
	Cluster    ClusterID
	Dispatcher DispatcherID
	Epoch      uint64
	Topic      string
}

// String renders e like "Ready(c1/d1 epoch 0)".
func (e Event) String() string {
	return fmt.Sprintf("%s(%s/%s epoch %d)", e.Kind, e.Cluster, e.Dispatcher, e.Epoch)
}

// Progress is one entry of a [Heartbeat].
type Progress struct {
	Dispatcher   DispatcherID
	CheckpointTs uint64
	Epoch        uint64
}

// Heartbeat is a collector's DispatcherHeartbeat for one cluster.
type Heartbeat struct {
	Cluster  ClusterID
	Progress []Progress
}

// HeartbeatResponse lists the dispatchers of a [Heartbeat] the broker
// does not know (state Removed); the collector re-registers them.
type HeartbeatResponse struct {
	Cluster ClusterID
	Removed []DispatcherID
}

// Snapshot is the broker registry at one point of the request loop.
type Snapshot struct {
	// AdmissionClosed is the admission gate's state.
	AdmissionClosed bool
	// Brokers lists the brokers, sorted by cluster.
	Brokers []BrokerSnapshot
}

// BrokerCount is one broker's count word as [Service.BrokerCounts] reads
// it: the TLA+ count[b] and gateClosed[b] of broker b.
type BrokerCount struct {
	Cluster ClusterID
	// Count is the broker's dispatcher count.
	Count int64
	// GateClosed is the broker's copy of the admission gate (its gate
	// bit).
	GateClosed bool
}

// BrokerSnapshot is one broker in a [Snapshot].
type BrokerSnapshot struct {
	Cluster ClusterID
	// Count is the broker's dispatcher count.
	Count int64
	// Dispatchers lists the published dispatchers (table triggers
	// included), sorted by ID.
	Dispatchers []DispatcherSnapshot
	// Changefeeds lists the changefeeds with at least one dispatcher,
	// sorted.
	Changefeeds []ChangefeedID
}

// DispatcherSnapshot is one published dispatcher in a [BrokerSnapshot].
type DispatcherSnapshot struct {
	ID           DispatcherID
	Changefeed   ChangefeedID
	TableTrigger bool
	Table        TableID
	Epoch        uint64
	StartTs      uint64
	CheckpointTs uint64
	// LastHeartbeat is when the dispatcher registered or last had a
	// heartbeat of its epoch applied.
	LastHeartbeat time.Time
}

// Sentinel errors.
var (
	// ErrAdmissionClosed is returned for a registration refused by the
	// closed admission gate (R8/F-R7).
	ErrAdmissionClosed = errors.New("eventservice: admission closed")
	// ErrNotReusable is returned for a registration the event store
	// refused (closed, or an OnlyReuse miss).
	ErrNotReusable = errors.New("eventservice: event store refused the dispatcher")
	// ErrUnknownDispatcher is returned for a Reset of a dispatcher the
	// broker does not know; a reset never creates a registration.
	ErrUnknownDispatcher = errors.New("eventservice: unknown dispatcher")
	// ErrStopped is returned when the request loop is not running
	// (Run has returned).
	ErrStopped = errors.New("eventservice: service stopped")
	// ErrNotRunning is returned by the calls that wait for the request
	// loop (Do, Heartbeat, Cleanup, Snapshot) before Run or Start was
	// called: nothing would ever answer them.
	ErrNotRunning = errors.New("eventservice: request loop not started (call Start, or Run, first)")
	// ErrBadRequest is wrapped by the error returned for a malformed
	// request.
	ErrBadRequest = errors.New("eventservice: bad request")
)
