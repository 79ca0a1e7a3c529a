package spec

import (
	"fmt"
	"strings"
)

// None is the TLA+ sentinel None (-1) of the integer fields: an epoch or a
// count that is not there.
const None = -1

// Liveness is a node's liveness, or NoLiveness in a message that carries
// none.
type Liveness int8

// The liveness values; the order is the TLA+ Rank.
const (
	Alive Liveness = iota
	Draining
	Stopping
	// NoLiveness is the TLA+ NoLiveness ("NONE").
	NoLiveness
)

// String returns the TLA+ spelling of l.
func (l Liveness) String() string {
	switch l {
	case Alive:
		return "ALIVE"
	case Draining:
		return "DRAINING"
	case Stopping:
		return "STOPPING"
	case NoLiveness:
		return "NONE"
	}
	return fmt.Sprintf("Liveness(%d)", int8(l))
}

// Succ is the TLA+ Succ: the one step forward from l (NoLiveness after
// STOPPING).
func (l Liveness) Succ() Liveness {
	if l < Stopping {
		return l + 1
	}
	return NoLiveness
}

// Pc is a broker's program counter for one dispatcher (TLA+ PcValues), in
// the order of the implementation's steps.
type Pc int8

// The program counter values.
const (
	PcIdle Pc = iota
	PcGated
	PcRegated
	PcReplacing
	PcAdmitted
	PcSubscribed
	PcRegistered
	PcFailed
	PcUnsubscribe
	PcRollback
	PcRemoving
	PcRaced
	numPc
)

var pcNames = [numPc]string{"idle", "gated", "regated", "replacing", "admitted", "subscribed",
	"registered", "failed", "unsubscribe", "rollback", "removing", "raced"}

// String returns the TLA+ spelling of p.
func (p Pc) String() string {
	if p >= 0 && p < numPc {
		return pcNames[p]
	}
	return fmt.Sprintf("Pc(%d)", int8(p))
}

// Version is the version a process of T runs (TLA+ Versions), or, for the
// coordinator's knowledge of it, VersionUnknown.
type Version int8

// The versions.
const (
	VersionUnknown Version = iota
	VersionNew
	VersionLegacy
)

// String returns the TLA+ spelling of v.
func (v Version) String() string {
	switch v {
	case VersionUnknown:
		return "unknown"
	case VersionNew:
		return "new"
	case VersionLegacy:
		return "legacy"
	}
	return fmt.Sprintf("Version(%d)", int8(v))
}

// ParseVersion returns the Version that TLA+ spells s ("new" or "legacy").
func ParseVersion(s string) (Version, bool) {
	switch s {
	case "new":
		return VersionNew, true
	case "legacy":
		return VersionLegacy, true
	}
	return VersionUnknown, false
}

// NoBroker is TLA+ NoBroker: the broker of an idle dispatcher.
const NoBroker = -1

// Phase is the phase of the report being sampled (TLA+ sample.phase).
type Phase int8

// The phases.
const (
	// PhaseIdle: no report is being sampled.
	PhaseIdle Phase = iota
	// PhaseLiveness: (heartbeat) the heartbeat has read T's liveness.
	PhaseLiveness
	// PhaseReading: the report has read the gate and sums the counts.
	PhaseReading
)

// String returns the TLA+ spelling of p.
func (p Phase) String() string {
	return [...]string{"idle", "liveness", "reading"}[p]
}

// Sample is the report being sampled (TLA+ sample).
type Sample struct {
	Phase    Phase
	Liveness Liveness
	Closed   bool
	Read     uint8 // brokers read, a bitmask
	Sum      int8
}

// noSample is TLA+ NoSample.
var noSample = Sample{Liveness: NoLiveness}

// LastReport is the last report the service sent (TLA+ lastReport; kept
// only under NoReReport).
type LastReport struct {
	Count  int8 // None when no report was sent
	Closed bool
}

// noLastReport is TLA+ NoLastReport.
var noLastReport = LastReport{Count: None}

// Kind is a message kind (the TLA+ set Kinds).
type Kind int8

// The message kinds.
const (
	KindCmd Kind = iota
	KindResp
	KindHb
	KindReport
	KindQuery
	KindAns
	numKinds
)

// String returns the TLA+ spelling of k.
func (k Kind) String() string {
	return [...]string{"cmd", "resp", "hb", "report", "query", "ans"}[k]
}

// Msg is the one record shape of every message (TLA+ Messages).
type Msg struct {
	Kind     Kind
	Epoch    int8 // 1..MaxEpoch, or None
	Liveness Liveness
	Count    int8 // a count, or None
	Closed   bool
}

// Cmd is TLA+ Cmd(e, l): SetNodeLivenessRequest.
func Cmd(e int8, l Liveness) Msg { return Msg{KindCmd, e, l, None, false} }

// Resp is TLA+ Resp(e, l): SetNodeLivenessResponse.
func Resp(e int8, l Liveness) Msg { return Msg{KindResp, e, l, None, false} }

// Hb is TLA+ Hb(e, l, c, cl): NodeHeartbeat.
func Hb(e int8, l Liveness, c int8, cl bool) Msg { return Msg{KindHb, e, l, c, cl} }

// Report is TLA+ Report(e, c, cl): EventBrokerDispatcherCount.
func Report(e, c int8, cl bool) Msg { return Msg{KindReport, e, NoLiveness, c, cl} }

// Query is TLA+ Query: CountQuery, the coordinator's question for T's
// count (it names T only).
var Query = Msg{KindQuery, None, NoLiveness, None, false}

// Ans is TLA+ Ans(e, c, cl): EventBrokerDispatcherCountResponse;
// Ans(None, None, false) is "unknown".
func Ans(e, c int8, cl bool) Msg { return Msg{KindAns, e, NoLiveness, c, cl} }

// String labels m as a protocol message, e.g.
// "hb{epoch:1 liveness:STOPPING count:0 closed:TRUE}".
func (m Msg) String() string {
	switch m.Kind {
	case KindCmd, KindResp:
		return fmt.Sprintf("%s{epoch:%d liveness:%s}", m.Kind, m.Epoch, m.Liveness)
	case KindHb:
		if m.Count == None {
			return fmt.Sprintf("hb{epoch:%d liveness:%s}", m.Epoch, m.Liveness)
		}
		return fmt.Sprintf("hb{epoch:%d liveness:%s count:%d closed:%s}", m.Epoch, m.Liveness, m.Count, tla(m.Closed))
	case KindAns:
		if m.Epoch == None {
			return "ans{unknown}"
		}
	case KindQuery:
		return "query{}"
	}
	return fmt.Sprintf("%s{epoch:%d count:%d closed:%s}", m.Kind, m.Epoch, m.Count, tla(m.Closed))
}

// tlaValue renders m as a TLA+ record.
func (m Msg) tlaValue() string {
	return fmt.Sprintf("[kind |-> %q, epoch |-> %d, liveness |-> %q, count |-> %d, closed |-> %s]",
		m.Kind.String(), m.Epoch, m.Liveness.String(), m.Count, tla(m.Closed))
}

// CacheEntry is the LogCoordinator's cached report for T (TLA+ cache).
type CacheEntry struct {
	Epoch  int8 // None when nothing is cached
	Count  int8
	Closed bool
}

// noReport is TLA+ NoReport.
var noReport = CacheEntry{Epoch: None, Count: None}

// msgID indexes the finite universe of messages (see Model.msgID).
type msgID = uint16

// noMsg pads the unused slots of State.Net.
const noMsg msgID = 0xFFFF

// State mirrors the VARIABLES of DrainRegistration.tla. It is a comparable
// value: copies share nothing. Sets over dispatchers and brokers are
// bitmasks indexed by position in Config.Dispatchers and Config.Brokers
// (sorted); Regs has bit d*MaxBrokers+b for REGISTER(d) at broker b; the
// network is a sorted array of message IDs padded with noMsg.
//
// A State is plain (see PlainState): its fields are integers, booleans
// and arrays of them with no padding (Regs, the one 32-bit field, comes
// first for that), and the unused tails of Pc, Brk, Count and Net always
// hold the same values, so two states are the same state exactly when
// their bytes are equal.
type State struct {
	// The collectors' REGISTERs in flight (see Registrations).
	Regs uint32
	// T's current process.
	Epoch           int8
	Version         Version
	Liveness        Liveness
	Closing         bool
	GateClosed      uint8
	AdmissionClosed bool
	Pc              [MaxDispatchers]Pc
	Brk             [MaxDispatchers]int8 // broker index, or NoBroker
	Count           [MaxBrokers]int8
	Subscribed      uint8
	SchemaRef       uint8
	Removed         uint8
	Sample          Sample
	LastReport      LastReport
	// The collectors.
	Registrations int8
	// The coordinator.
	CoordEpoch    int8
	CoordVersion  Version
	CoordLiveness Liveness
	CoordCount    int8
	Work          int8
	DrainedEpoch  int8
	LegacyEpoch   int8
	// The LogCoordinator.
	Cache CacheEntry
	// The network.
	NetLen uint8
	Net    [MaxMsgsLimit]msgID
}

// regBit is the bit of REGISTER(d) at broker b in State.Regs.
func regBit(d, b int) uint32 { return 1 << (d*MaxBrokers + b) }

func bit(mask uint8, d int) bool { return mask&(1<<d) != 0 }

func setBit(mask uint8, d int, v bool) uint8 {
	if v {
		return mask | 1<<d
	}
	return mask &^ (1 << d)
}

// netHas reports whether id is in flight.
func (s *State) netHas(id msgID) bool {
	for i := 0; i < int(s.NetLen); i++ {
		if s.Net[i] == id {
			return true
		}
		if s.Net[i] > id {
			return false
		}
	}
	return false
}

// netAdd inserts id (not yet present; there is room).
func (s *State) netAdd(id msgID) {
	i := int(s.NetLen)
	for i > 0 && s.Net[i-1] > id {
		s.Net[i] = s.Net[i-1]
		i--
	}
	s.Net[i] = id
	s.NetLen++
}

// netDel removes id if present.
func (s *State) netDel(id msgID) {
	n := int(s.NetLen)
	for i := 0; i < n; i++ {
		if s.Net[i] == id {
			copy(s.Net[i:n-1], s.Net[i+1:n])
			s.Net[n-1] = noMsg
			s.NetLen--
			return
		}
	}
}

func tla(b bool) string {
	if b {
		return "TRUE"
	}
	return "FALSE"
}

// Encode appends a canonical encoding of s: one byte per scalar, then the
// per-dispatcher and per-broker arrays, then the network's message IDs.
func (m *Model) Encode(dst []byte, s State) []byte {
	dst = append(dst,
		byte(s.Epoch), byte(s.Version), byte(s.Liveness), b2u(s.Closing), s.GateClosed,
		b2u(s.AdmissionClosed), s.Subscribed, s.SchemaRef, s.Removed,
		byte(s.Sample.Phase), byte(s.Sample.Liveness), b2u(s.Sample.Closed), s.Sample.Read, byte(s.Sample.Sum),
		byte(s.LastReport.Count), b2u(s.LastReport.Closed),
		byte(s.Registrations), byte(s.Regs), byte(s.Regs>>8), byte(s.Regs>>16), byte(s.Regs>>24),
		byte(s.CoordEpoch), byte(s.CoordVersion), byte(s.CoordLiveness), byte(s.CoordCount), byte(s.Work),
		byte(s.DrainedEpoch), byte(s.LegacyEpoch), byte(s.Cache.Epoch), byte(s.Cache.Count), b2u(s.Cache.Closed),
		s.NetLen)
	for d := 0; d < m.nd; d++ {
		dst = append(dst, byte(s.Pc[d]), byte(s.Brk[d]))
	}
	for b := 0; b < m.nb; b++ {
		dst = append(dst, byte(s.Count[b]))
	}
	for i := 0; i < int(s.NetLen); i++ {
		dst = append(dst, byte(s.Net[i]>>8), byte(s.Net[i]))
	}
	return dst
}

// PlainState declares State plain for the model checker: a state is
// identified by its bytes in memory, which the checker fingerprints
// directly instead of calling Encode (the checker verifies that State has
// no padding and no pointers). Encode stays the canonical encoding for
// views and for readers of the bytes.
func (m *Model) PlainState() {}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Vars returns the TLA+ variables of s, in the module's order, in TLA+
// notation.
func (m *Model) Vars(s State) [][2]string {
	fn := func(names []string, f func(i int) string) string {
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = n + " :> " + f(i)
		}
		return "(" + strings.Join(parts, " @@ ") + ")"
	}
	ds, bs := m.cfg.Dispatchers, m.cfg.Brokers
	boolFn := func(mask uint8) string {
		return fn(ds, func(d int) string { return tla(bit(mask, d)) })
	}
	msgs := make([]string, s.NetLen)
	for i := range msgs {
		msgs[i] = m.msgs[s.Net[i]].tlaValue()
	}
	var regs []string
	for d := range ds {
		for b := range bs {
			if s.Regs&regBit(d, b) != 0 {
				regs = append(regs, fmt.Sprintf("[disp |-> %s, broker |-> %s]", ds[d], bs[b]))
			}
		}
	}
	return [][2]string{
		{"epoch", fmt.Sprint(s.Epoch)},
		{"version", fmt.Sprintf("%q", s.Version.String())},
		{"liveness", fmt.Sprintf("%q", s.Liveness.String())},
		{"closing", tla(s.Closing)},
		{"gateClosed", fn(bs, func(b int) string { return tla(bit(s.GateClosed, b)) })},
		{"admissionClosed", tla(s.AdmissionClosed)},
		{"pc", fn(ds, func(d int) string { return fmt.Sprintf("%q", s.Pc[d].String()) })},
		{"brk", fn(ds, func(d int) string { return m.brokerName(s.Brk[d]) })},
		{"count", fn(bs, func(b int) string { return fmt.Sprint(s.Count[b]) })},
		{"subscribed", boolFn(s.Subscribed)},
		{"schemaRef", boolFn(s.SchemaRef)},
		{"removed", boolFn(s.Removed)},
		{"sample", fmt.Sprintf("[phase |-> %q, liveness |-> %q, closed |-> %s, read |-> %s, sum |-> %d]",
			s.Sample.Phase.String(), s.Sample.Liveness.String(), tla(s.Sample.Closed), m.brokerSet(s.Sample.Read), s.Sample.Sum)},
		{"lastReport", fmt.Sprintf("[count |-> %d, closed |-> %s]", s.LastReport.Count, tla(s.LastReport.Closed))},
		{"registrations", fmt.Sprint(s.Registrations)},
		{"regs", "{" + strings.Join(regs, ", ") + "}"},
		{"coordEpoch", fmt.Sprint(s.CoordEpoch)},
		{"coordVersion", fmt.Sprintf("%q", s.CoordVersion.String())},
		{"coordLiveness", fmt.Sprintf("%q", s.CoordLiveness.String())},
		{"coordCount", fmt.Sprint(s.CoordCount)},
		{"work", fmt.Sprint(s.Work)},
		{"drainedEpoch", fmt.Sprint(s.DrainedEpoch)},
		{"legacyEpoch", fmt.Sprint(s.LegacyEpoch)},
		{"cache", fmt.Sprintf("[epoch |-> %d, count |-> %d, closed |-> %s]", s.Cache.Epoch, s.Cache.Count, tla(s.Cache.Closed))},
		{"net", "{" + strings.Join(msgs, ", ") + "}"},
	}
}

// brokerName is the TLA+ value of broker index b (NoBroker is "none").
func (m *Model) brokerName(b int8) string {
	if b == NoBroker {
		return `"none"`
	}
	return m.cfg.Brokers[b]
}

// brokerSet renders a broker bitmask as a TLA+ set.
func (m *Model) brokerSet(mask uint8) string {
	var names []string
	for b, n := range m.cfg.Brokers {
		if bit(mask, b) {
			names = append(names, n)
		}
	}
	return "{" + strings.Join(names, ", ") + "}"
}
