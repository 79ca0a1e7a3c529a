package spec

import (
	"github.com/drainproof/drainproof/tla/names"

	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Limits of the Go transcription. They keep State a small fixed-size value.
const (
	// MaxDispatchers is the largest Dispatchers set a Config may name.
	MaxDispatchers = 8
	// MaxBrokers is the largest Brokers set a Config may name.
	MaxBrokers = 4
	// MaxMsgsLimit is the largest MaxMsgs a Config may set.
	MaxMsgsLimit = 8
	// MaxEpochLimit is the largest MaxEpoch a Config may set.
	MaxEpochLimit = 15
	// MaxRegLimit is the largest MaxReg a Config may set.
	MaxRegLimit = 15
)

// The transports of the broker count (the TLA+ constant Transport).
const (
	// TransportHeartbeat carries the count on T's heartbeat (Variant H).
	TransportHeartbeat = "heartbeat"
	// TransportLogCoord carries the count through the LogCoordinator
	// (Variant L).
	TransportLogCoord = "logcoord"
)

// Bug is one element of the TLA+ set BugNames: a defect the model can
// switch on.
type Bug uint32

// The bugs of docs/protocol.md §13.
const (
	// IgnoreBrokerCount: completion ignores the broker count.
	IgnoreBrokerCount Bug = 1 << iota
	// TrustLivenessResponse: a missing count reads as 0, so a STOPPING
	// liveness response authorises completion.
	TrustLivenessResponse
	// AcceptStaleEpoch: a delayed heartbeat or answer from an older epoch
	// is applied.
	AcceptStaleEpoch
	// CountAfterPublish: the count rises only when registration completes.
	CountAfterPublish
	// NoAdmissionGate: registrations are still admitted after STOPPING.
	NoAdmissionGate
	// DecrementBeforeCleanup: removal decrements before store cleanup.
	DecrementBeforeCleanup
	// LeakOnSchemaFailure: a failed RegisterTable leaves the subscription
	// and no removed mark.
	LeakOnSchemaFailure
	// DoubleDecrement: the background cleanup races a removal and both
	// decrement.
	DoubleDecrement
	// DoubleIncrement: a repeated registration of one ID counts twice.
	DoubleIncrement
	// UnknownErasesCount: an unknown LogCoordinator answer replaces the
	// accepted count with 0 (logcoord transport only).
	UnknownErasesCount
	// SampleBeforeClose: a report sums the brokers' counts before it
	// closes admission, and reports the gate read after the sum.
	SampleBeforeClose
	// ClosedBeforeBrokers: closing admission sets the service's closed
	// flag before it sets each broker's gate bit.
	ClosedBeforeBrokers
	// RollbackBeforeUnsubscribe: a failed RegisterTable rolls the count
	// back before it releases the event-store subscription.
	RollbackBeforeUnsubscribe
	// SkipDraining: the coordinator sends STOPPING without having
	// observed DRAINING and without waiting for the maintainers' work.
	SkipDraining
	// NodeAcceptsSkip: the node takes any forward liveness step a
	// command asks for, not only the next one.
	NodeAcceptsSkip
	// LegacyOnUnknown: the coordinator gives the legacy hard-restart
	// answer while the node's version is still unknown.
	LegacyOnUnknown
	// NoReReport: the service reports only when its report changed, so
	// an entry the LogCoordinator expired is never refreshed (logcoord
	// transport only).
	NoReReport
)

var bugNames = []struct {
	name string
	bug  Bug
}{
	{names.BugIgnoreBrokerCount, IgnoreBrokerCount},
	{names.BugTrustLivenessResponse, TrustLivenessResponse},
	{names.BugAcceptStaleEpoch, AcceptStaleEpoch},
	{names.BugCountAfterPublish, CountAfterPublish},
	{names.BugNoAdmissionGate, NoAdmissionGate},
	{names.BugDecrementBeforeCleanup, DecrementBeforeCleanup},
	{names.BugLeakOnSchemaFailure, LeakOnSchemaFailure},
	{names.BugDoubleDecrement, DoubleDecrement},
	{names.BugDoubleIncrement, DoubleIncrement},
	{names.BugUnknownErasesCount, UnknownErasesCount},
	{names.BugSampleBeforeClose, SampleBeforeClose},
	{names.BugClosedBeforeBrokers, ClosedBeforeBrokers},
	{names.BugRollbackBeforeUnsubscribe, RollbackBeforeUnsubscribe},
	{names.BugSkipDraining, SkipDraining},
	{names.BugNodeAcceptsSkip, NodeAcceptsSkip},
	{names.BugLegacyOnUnknown, LegacyOnUnknown},
	{names.BugNoReReport, NoReReport},
}

// BugNames lists the names of the bugs, as the TLA+ set BugNames spells
// them.
func BugNames() []string {
	out := make([]string, len(bugNames))
	for i, b := range bugNames {
		out[i] = b.name
	}
	return out
}

// ParseBug returns the Bug with the given TLA+ name.
func ParseBug(name string) (Bug, error) {
	for _, b := range bugNames {
		if b.name == name {
			return b.bug, nil
		}
	}
	return 0, fmt.Errorf("spec: unknown bug %q (want one of %s)", name, strings.Join(BugNames(), ", "))
}

// String returns the TLA+ names of the bugs in b, like a TLA+ set.
func (b Bug) String() string {
	var names []string
	for _, n := range bugNames {
		if b&n.bug != 0 {
			names = append(names, fmt.Sprintf("%q", n.name))
		}
	}
	return "{" + strings.Join(names, ", ") + "}"
}

// ModelValues are the model values MCDrainRegistration.tla declares (its
// CONSTANTS d1, d2, d3 and b1, b2, b3); a cfg assigns each to itself
// ("d1 = d1").
var ModelValues = []string{"d1", "d2", "d3", "b1", "b2", "b3"}

// Config mirrors the CONSTANTS of DrainRegistration.tla.
type Config struct {
	// Dispatchers names the dispatcher IDs (model values such as "d1").
	Dispatchers []string
	// TableTriggers names the table-trigger dispatchers among them.
	TableTriggers []string
	// Brokers names T's event brokers, one per upstream cluster (model
	// values such as "b1").
	Brokers []string
	// Versions lists the versions a process of T may run ("new",
	// "legacy").
	Versions []string
	// MaxEpoch bounds T's process lifetimes (epochs 1..MaxEpoch).
	MaxEpoch int
	// MaxReg bounds the REGISTER requests the collectors issue in total.
	MaxReg int
	// MaxMsgs bounds the messages in flight.
	MaxMsgs int
	// Transport is TransportHeartbeat or TransportLogCoord.
	Transport string
	// Bugs is the set of defects switched on; 0 is the correct protocol.
	Bugs Bug
}

// DefaultConfig returns the constants of MCDrainRegistration.cfg, the
// default model.
func DefaultConfig() Config {
	return Config{
		Dispatchers:   []string{"d1", "d2"},
		TableTriggers: []string{"d2"},
		Brokers:       []string{"b1"},
		Versions:      []string{"new"},
		MaxEpoch:      2,
		MaxReg:        2,
		MaxMsgs:       2,
		Transport:     TransportHeartbeat,
	}
}

// ErrConstant is wrapped by every error SetConstant and Validate return.
var ErrConstant = errors.New("spec: bad constant")

// SetConstant sets the constant name (as the TLA+ module spells it) from a
// value parsed out of a TLC cfg: an int64 or int, a string (model values
// are strings too, or any type whose kind is string), a bool, or a []any
// for a set. The model values d1, d2, d3 may only be assigned themselves.
func (c *Config) SetConstant(name string, v any) error {
	switch name {
	case "Dispatchers", "TableTriggers", "Brokers", "Versions":
		set, err := stringSet(name, v)
		if err != nil {
			return err
		}
		switch name {
		case "Dispatchers":
			c.Dispatchers = set
		case "TableTriggers":
			c.TableTriggers = set
		case "Brokers":
			c.Brokers = set
		default:
			c.Versions = set
		}
	case "MaxEpoch", "MaxReg", "MaxMsgs":
		n, err := integer(name, v)
		if err != nil {
			return err
		}
		switch name {
		case "MaxEpoch":
			c.MaxEpoch = n
		case "MaxReg":
			c.MaxReg = n
		default:
			c.MaxMsgs = n
		}
	case "Transport":
		s, ok := str(v)
		if !ok {
			return fmt.Errorf("%w: Transport must be a string, got %T", ErrConstant, v)
		}
		if s != TransportHeartbeat && s != TransportLogCoord {
			return fmt.Errorf("%w: Transport must be %q or %q, got %q", ErrConstant, TransportHeartbeat, TransportLogCoord, s)
		}
		c.Transport = s
	case "Bugs":
		set, err := stringSet(name, v)
		if err != nil {
			return err
		}
		var bugs Bug
		for _, n := range set {
			b, err := ParseBug(n)
			if err != nil {
				return fmt.Errorf("%w: Bugs: %v", ErrConstant, err)
			}
			bugs |= b
		}
		c.Bugs = bugs
	default:
		if slices.Contains(ModelValues, name) {
			if s, ok := str(v); !ok || s != name {
				return fmt.Errorf("%w: %s is a model value and can only be assigned itself (%s = %s), got %v", ErrConstant, name, name, name, v)
			}
			return nil
		}
		return fmt.Errorf("%w: unknown constant %q (DrainRegistration has Dispatchers, TableTriggers, Brokers, Versions, MaxEpoch, MaxReg, MaxMsgs, Transport, Bugs and model values d1, d2, d3, b1, b2, b3)", ErrConstant, name)
	}
	return nil
}

// ConstantError is an error of Validate: Name is the constant whose value
// is wrong (of two that contradict each other, the dependent one:
// TableTriggers against Dispatchers, Bugs against Transport). It wraps
// ErrConstant.
type ConstantError struct {
	Name string
	Msg  string
}

// Error formats the error as "spec: bad constant: " and the message.
func (e *ConstantError) Error() string { return ErrConstant.Error() + ": " + e.Msg }

// Unwrap returns ErrConstant.
func (e *ConstantError) Unwrap() error { return ErrConstant }

// Validate checks the ASSUME of DrainRegistration.tla and the limits of
// the Go transcription; its errors are *ConstantError.
func (c *Config) Validate() error {
	bad := func(name, format string, args ...any) error {
		return &ConstantError{Name: name, Msg: fmt.Sprintf(format, args...)}
	}
	if len(c.Dispatchers) == 0 {
		return bad("Dispatchers", "Dispatchers is empty or not set")
	}
	if len(c.Dispatchers) > MaxDispatchers {
		return bad("Dispatchers", "Dispatchers has %d elements, at most %d supported", len(c.Dispatchers), MaxDispatchers)
	}
	seen := map[string]bool{}
	for _, d := range c.Dispatchers {
		if seen[d] {
			return bad("Dispatchers", "Dispatchers names %q twice", d)
		}
		seen[d] = true
	}
	for _, d := range c.TableTriggers {
		if !seen[d] {
			return bad("TableTriggers", "TableTriggers must be a subset of Dispatchers: %q is not a dispatcher", d)
		}
	}
	if len(c.Brokers) == 0 {
		return bad("Brokers", "Brokers is empty or not set")
	}
	if len(c.Brokers) > MaxBrokers {
		return bad("Brokers", "Brokers has %d elements, at most %d supported", len(c.Brokers), MaxBrokers)
	}
	if len(c.Versions) == 0 {
		return bad("Versions", "Versions is empty or not set")
	}
	for _, v := range c.Versions {
		if _, ok := ParseVersion(v); !ok {
			return bad("Versions", "Versions must be a subset of {\"new\", \"legacy\"}: %q", v)
		}
	}
	if c.MaxEpoch < 1 || c.MaxEpoch > MaxEpochLimit {
		return bad("MaxEpoch", "MaxEpoch must be in 1..%d, got %d", MaxEpochLimit, c.MaxEpoch)
	}
	if c.MaxReg < 0 || c.MaxReg > MaxRegLimit {
		return bad("MaxReg", "MaxReg must be in 0..%d, got %d", MaxRegLimit, c.MaxReg)
	}
	if c.MaxMsgs < 1 || c.MaxMsgs > MaxMsgsLimit {
		return bad("MaxMsgs", "MaxMsgs must be in 1..%d, got %d", MaxMsgsLimit, c.MaxMsgs)
	}
	if c.Transport != TransportHeartbeat && c.Transport != TransportLogCoord {
		return bad("Transport", "Transport must be %q or %q, got %q", TransportHeartbeat, TransportLogCoord, c.Transport)
	}
	if c.Bugs&UnknownErasesCount != 0 && c.Transport != TransportLogCoord {
		return bad("Bugs", "UnknownErasesCount needs Transport = %q", TransportLogCoord)
	}
	if c.Bugs&NoReReport != 0 && c.Transport != TransportLogCoord {
		return bad("Bugs", "NoReReport needs Transport = %q", TransportLogCoord)
	}
	return nil
}

func str(v any) (string, bool) {
	if s, ok := v.(string); ok {
		return s, true
	}
	rv := reflect.ValueOf(v)
	if rv.IsValid() && rv.Kind() == reflect.String {
		return rv.String(), true
	}
	return "", false
}

func integer(name string, v any) (int, error) {
	switch n := v.(type) {
	case int64:
		return int(n), nil
	case int:
		return n, nil
	}
	return 0, fmt.Errorf("%w: %s must be an integer, got %T (%v)", ErrConstant, name, v, v)
}

func stringSet(name string, v any) ([]string, error) {
	var elems []any
	switch s := v.(type) {
	case []any:
		elems = s
	case []string:
		for _, e := range s {
			elems = append(elems, e)
		}
	default:
		return nil, fmt.Errorf("%w: %s must be a set, got %T (%v)", ErrConstant, name, v, v)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		s, ok := str(e)
		if !ok {
			return nil, fmt.Errorf("%w: %s must be a set of model values or strings, got element %T (%v)", ErrConstant, name, e, e)
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out, nil
}
