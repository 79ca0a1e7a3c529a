package lincheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"os"
	"slices"
	"strings"
)

// The dispatcher universe of a history: NumOrdinary ordinary dispatchers
// "d0".."d5" and NumTriggers table-trigger dispatchers "t0".."t2", spread
// over NumBrokers upstream clusters (dispatcher index i belongs to broker
// i mod NumBrokers: [BrokerOf]). The index order is the service's ID
// order (its inactivity cleanup walks dispatchers sorted by ID).
const (
	// NumOrdinary is the number of ordinary dispatcher IDs, "d0".."d5".
	NumOrdinary = 6
	// NumTriggers is the number of table-trigger dispatcher IDs, "t0".."t2".
	NumTriggers = 3
	// NumIDs is the size of the dispatcher universe.
	NumIDs = NumOrdinary + NumTriggers
	// NumBrokers is the number of event brokers (upstream clusters "c1",
	// "c2").
	NumBrokers = 2
	// MaxClients is the largest number of clients a history may have.
	MaxClients = 32
	// HistoryVersion is the version of the history file format (2: two
	// brokers, audits carry the count of each).
	HistoryVersion = 2
)

// BrokerOf returns the broker (0-based) of dispatcher index i.
func BrokerOf(i int) int { return i % NumBrokers }

const ordinaryMask = uint16(1)<<NumOrdinary - 1

// IDName returns the name of dispatcher index i ("d3", "t1").
func IDName(i int) string {
	if i < NumOrdinary {
		return fmt.Sprintf("d%d", i)
	}
	return fmt.Sprintf("t%d", i-NumOrdinary)
}

// ParseID returns the index of the dispatcher named name.
func ParseID(name string) (int, error) {
	for i := range NumIDs {
		if IDName(i) == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("unknown dispatcher %q (want d0..d%d or t0..t%d)", name, NumOrdinary-1, NumTriggers-1)
}

func isTrigger(i int) bool { return i >= NumOrdinary }

// Kind is the kind of a client operation.
type Kind string

// The client operations.
const (
	// KindRegister is Service.Do with a Register request.
	KindRegister Kind = "register"
	// KindRemove is Service.Do with a Remove request.
	KindRemove Kind = "remove"
	// KindReset is Service.Do with a Reset request.
	KindReset Kind = "reset"
	// KindCleanup is Service.Cleanup (the inactivity cleanup).
	KindCleanup Kind = "cleanup"
	// KindClose is Service.CloseAdmission.
	KindClose Kind = "close"
	// KindReport is Service.Sample.
	KindReport Kind = "report"
	// KindSubscribers reads the event store's subscribers
	// (MemEventStore.Subscribers).
	KindSubscribers Kind = "subscribers"
	// KindAudit is a quiescent observation of the whole state: the
	// service's Snapshot and both stores, taken while no other operation
	// runs. Audits cut the history into partitions.
	KindAudit Kind = "audit"
)

var kinds = []Kind{KindRegister, KindRemove, KindReset, KindCleanup, KindClose, KindReport, KindSubscribers, KindAudit}

// Fault is a store fault injected into one registration.
type Fault string

// The injectable faults.
const (
	// NoFault injects nothing.
	NoFault Fault = ""
	// FaultRefuse makes EventStore.RegisterDispatcher refuse
	// (TLA+ BrokerSubscribeRefused).
	FaultRefuse Fault = "refuse"
	// FaultSchema makes SchemaStore.RegisterTable fail
	// (TLA+ BrokerRegisterTableFails).
	FaultSchema Fault = "schema"
)

// Err is the class of error a request returned.
type Err string

// The error classes.
const (
	// ErrNone is success.
	ErrNone Err = ""
	// ErrAdmissionClosed is eventservice.ErrAdmissionClosed.
	ErrAdmissionClosed Err = "admission-closed"
	// ErrNotReusable is eventservice.ErrNotReusable (a refusing event store).
	ErrNotReusable Err = "not-reusable"
	// ErrSchema is a RegisterTable failure.
	ErrSchema Err = "schema"
	// ErrUnknownDispatcher is eventservice.ErrUnknownDispatcher.
	ErrUnknownDispatcher Err = "unknown-dispatcher"
)

// Op is one client operation of a [History]: what a client called, what
// it got back, and when (Call and Return are ticks of the recorder's
// clock; Call ≤ Return, and [Call, Return] is a closed interval). Fields a
// kind does not use are zero.
type Op struct {
	// Client is the calling client, 0 ≤ Client < History.Clients.
	Client int   `json:"client"`
	Call   int64 `json:"call"`
	Return int64 `json:"return"`
	Kind   Kind  `json:"kind"`

	// ID is the dispatcher (register, remove, reset).
	ID string `json:"id,omitempty"`
	// Fault is the store fault injected into a register.
	Fault Fault `json:"fault,omitempty"`
	// Epoch is a reset's epoch (≥ 1).
	Epoch uint8 `json:"epoch,omitempty"`

	// Err is the error class a register or reset returned.
	Err Err `json:"err,omitempty"`
	// Count is a report's or an audit's dispatcher count (a report's is
	// the sum over the brokers).
	Count int64 `json:"count,omitempty"`
	// Counts is an audit's count per broker, NumBrokers of them summing
	// to Count; it may be omitted when Count is 0.
	Counts []int64 `json:"counts,omitempty"`
	// Closed is a report's or an audit's admission flag.
	Closed bool `json:"closed,omitempty"`
	// Removed is how many dispatchers a cleanup removed.
	Removed int `json:"removed,omitempty"`
	// Held lists the event store's subscribers (subscribers, audit).
	Held []string `json:"held,omitempty"`
	// Registered maps an audit's published dispatchers to their epochs.
	Registered map[string]uint8 `json:"registered,omitempty"`
	// Refs is an audit's total of schema references.
	Refs int `json:"refs,omitempty"`
}

// History is a recorded (or hand-written) concurrent history of one event
// service.
type History struct {
	// Version is HistoryVersion.
	Version int `json:"version"`
	// Clients is the number of clients.
	Clients int `json:"clients"`
	// Seed is the recorder's seed (informational).
	Seed int64 `json:"seed"`
	// Bug is the bug of the zoo that was switched on, if any
	// (informational).
	Bug string `json:"bug,omitempty"`
	// Ops are the operations, in any order.
	Ops []Op `json:"ops"`
}

// Save writes h as indented JSON.
func (h *History) Save(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(h)
}

// SaveFile writes h to the file path.
func (h *History) SaveFile(path string) error {
	var buf bytes.Buffer
	if err := h.Save(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// ErrMalformed is wrapped by every error [Load] and [History.Validate]
// return for a history that is not well formed.
var ErrMalformed = errors.New("lincheck: malformed history")

// Load reads a history written by [History.Save] and validates it: unknown
// fields, trailing data, a wrong version and every violation of
// [History.Validate] are errors wrapping [ErrMalformed]. It never panics.
func Load(r io.Reader) (*History, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var h History
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the history object", ErrMalformed)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the history object", ErrMalformed)
	}
	if err := h.Validate(); err != nil {
		return nil, err
	}
	return &h, nil
}

// LoadFile reads and validates the history in the file path.
func LoadFile(path string) (*History, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := Load(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}

// Validate checks that h is well formed: the version, the client count,
// and for every operation its client, its interval, its kind and the
// fields its kind uses (and no others). It does not judge whether the
// history is linearizable. Errors wrap [ErrMalformed] and name the
// operation's index.
func (h *History) Validate() error {
	if h.Version != HistoryVersion {
		return fmt.Errorf("%w: version %d, want %d", ErrMalformed, h.Version, HistoryVersion)
	}
	if h.Clients < 1 || h.Clients > MaxClients {
		return fmt.Errorf("%w: clients %d, want 1..%d", ErrMalformed, h.Clients, MaxClients)
	}
	for i := range h.Ops {
		if err := h.validateOp(&h.Ops[i]); err != nil {
			return fmt.Errorf("%w: op %d: %v", ErrMalformed, i, err)
		}
	}
	return nil
}

func (h *History) validateOp(op *Op) error {
	if op.Client < 0 || op.Client >= h.Clients {
		return fmt.Errorf("client %d out of range 0..%d", op.Client, h.Clients-1)
	}
	if op.Call < 0 || op.Return < op.Call {
		return fmt.Errorf("interval [%d, %d]: want 0 ≤ call ≤ return", op.Call, op.Return)
	}
	if !slices.Contains(kinds, op.Kind) {
		return fmt.Errorf("unknown kind %q", op.Kind)
	}
	used := usedFields[op.Kind]
	if err := validateKind(op); err != nil {
		return err
	}
	if slices.Contains(used, "id") {
		if _, err := ParseID(op.ID); err != nil {
			return fmt.Errorf("%s: %v", op.Kind, err)
		}
	}
	if slices.Contains(used, "held") {
		if _, err := heldMask(op.Held); err != nil {
			return fmt.Errorf("%s: held: %v", op.Kind, err)
		}
	}
	return extraFields(op, used)
}

// usedFields lists the fields each kind uses; any other non-zero field
// is an error.
var usedFields = map[Kind][]string{
	KindRegister:    {"id", "fault", "err"},
	KindRemove:      {"id"},
	KindReset:       {"id", "epoch", "err"},
	KindCleanup:     {"removed"},
	KindClose:       nil,
	KindReport:      {"count", "closed"},
	KindSubscribers: {"held"},
	KindAudit:       {"count", "counts", "closed", "held", "registered", "refs"},
}

// validateKind checks the values of the fields op's kind uses.
func validateKind(op *Op) error {
	switch op.Kind {
	case KindRegister:
		switch op.Fault {
		case NoFault, FaultRefuse, FaultSchema:
		default:
			return fmt.Errorf("unknown fault %q", op.Fault)
		}
		switch op.Err {
		case ErrNone, ErrAdmissionClosed, ErrNotReusable, ErrSchema:
		default:
			return fmt.Errorf("register: unexpected err %q", op.Err)
		}
	case KindReset:
		if op.Epoch == 0 {
			return errors.New("reset: epoch must be ≥ 1")
		}
		if op.Err != ErrNone && op.Err != ErrUnknownDispatcher {
			return fmt.Errorf("reset: unexpected err %q", op.Err)
		}
	case KindCleanup:
		if op.Removed < 0 || op.Removed > NumIDs {
			return fmt.Errorf("cleanup: removed %d out of range 0..%d", op.Removed, NumIDs)
		}
	case KindAudit:
		return validateAudit(op)
	}
	return nil
}

// validateAudit checks an audit's counts and registered names.
func validateAudit(op *Op) error {
	if op.Refs < 0 {
		return fmt.Errorf("audit: refs %d < 0", op.Refs)
	}
	if op.Counts != nil || op.Count != 0 {
		var sum int64
		for _, n := range op.Counts {
			sum += n
		}
		if len(op.Counts) != NumBrokers || sum != op.Count {
			return fmt.Errorf("audit: counts %v: want %d per-broker counts summing to count %d", op.Counts, NumBrokers, op.Count)
		}
	}
	for name := range op.Registered {
		if _, err := ParseID(name); err != nil {
			return fmt.Errorf("audit: registered: %v", err)
		}
	}
	return nil
}

// extraFields returns an error naming the non-zero fields of op that are
// not in used.
func extraFields(op *Op, used []string) error {
	set := map[string]bool{
		"id": op.ID != "", "fault": op.Fault != "", "epoch": op.Epoch != 0, "err": op.Err != "",
		"count": op.Count != 0, "counts": op.Counts != nil, "closed": op.Closed, "removed": op.Removed != 0,
		"held": op.Held != nil, "registered": op.Registered != nil, "refs": op.Refs != 0,
	}
	var extra []string
	for f, on := range set {
		if on && !slices.Contains(used, f) {
			extra = append(extra, f)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("%s does not take field(s) %s", op.Kind, strings.Join(extra, ", "))
	}
	return nil
}

// heldMask turns a list of dispatcher names into a bit mask; duplicates
// and table triggers (which never subscribe) are errors.
func heldMask(names []string) (uint16, error) {
	var m uint16
	for _, n := range names {
		i, err := ParseID(n)
		if err != nil {
			return 0, err
		}
		if isTrigger(i) {
			return 0, fmt.Errorf("table trigger %s cannot hold a subscription", n)
		}
		if m&(1<<i) != 0 {
			return 0, fmt.Errorf("%s listed twice", n)
		}
		m |= 1 << i
	}
	return m, nil
}

// maskNames lists the names of the dispatchers in m, in index order.
func maskNames(m uint16) []string {
	out := []string{}
	for m != 0 {
		i := bits.TrailingZeros16(m)
		out = append(out, IDName(i))
		m &^= 1 << i
	}
	return out
}
