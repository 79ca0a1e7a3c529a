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

// Pc is the broker's program counter for one dispatcher (TLA+ PcValues).
type Pc int8

// The program counter values.
const (
	PcIdle Pc = iota
	PcAdmitted
	PcSubscribed
	PcRegistered
	PcRemoving
	PcRaced
)

// String returns the TLA+ spelling of p.
func (p Pc) String() string {
	switch p {
	case PcIdle:
		return "idle"
	case PcAdmitted:
		return "admitted"
	case PcSubscribed:
		return "subscribed"
	case PcRegistered:
		return "registered"
	case PcRemoving:
		return "removing"
	case PcRaced:
		return "raced"
	}
	return fmt.Sprintf("Pc(%d)", int8(p))
}

// Kind is a message kind (the TLA+ set Kinds).
type Kind int8

// The message kinds.
const (
	KindCmd Kind = iota
	KindResp
	KindHb
	KindReport
	KindAns
	numKinds
)

// String returns the TLA+ spelling of k.
func (k Kind) String() string {
	return [...]string{"cmd", "resp", "hb", "report", "ans"}[k]
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
// value: copies share nothing. Sets over dispatchers are bitmasks indexed
// by the dispatcher's position in Config.Dispatchers (sorted); the network
// is a sorted array of message IDs padded with noMsg.
type State struct {
	// T's current process.
	Epoch           int8
	Liveness        Liveness
	AdmissionClosed bool
	Pc              [MaxDispatchers]Pc
	Count           int8
	Subscribed      uint8
	SchemaRef       uint8
	Removed         uint8
	// The collectors.
	Registrations int8
	// The coordinator.
	CoordEpoch    int8
	CoordLiveness Liveness
	CoordCount    int8
	Work          int8
	DrainedEpoch  int8
	// The LogCoordinator.
	Cache CacheEntry
	// The network.
	NetLen uint8
	Net    [MaxMsgsLimit]msgID
}

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

// Encode appends a canonical encoding of s: one byte per scalar, the
// dispatchers' program counters, and the network's message IDs.
func (m *Model) Encode(dst []byte, s State) []byte {
	dst = append(dst,
		byte(s.Epoch), byte(s.Liveness), b2u(s.AdmissionClosed), byte(s.Count),
		s.Subscribed, s.SchemaRef, s.Removed, byte(s.Registrations),
		byte(s.CoordEpoch), byte(s.CoordLiveness), byte(s.CoordCount), byte(s.Work),
		byte(s.DrainedEpoch), byte(s.Cache.Epoch), byte(s.Cache.Count), b2u(s.Cache.Closed),
		s.NetLen)
	for d := 0; d < m.nd; d++ {
		dst = append(dst, byte(s.Pc[d]))
	}
	for i := 0; i < int(s.NetLen); i++ {
		dst = append(dst, byte(s.Net[i]>>8), byte(s.Net[i]))
	}
	return dst
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Vars returns the TLA+ variables of s, in the module's order, in TLA+
// notation.
func (m *Model) Vars(s State) [][2]string {
	fn := func(f func(d int) string) string {
		parts := make([]string, m.nd)
		for d := 0; d < m.nd; d++ {
			parts[d] = m.cfg.Dispatchers[d] + " :> " + f(d)
		}
		return "(" + strings.Join(parts, " @@ ") + ")"
	}
	boolFn := func(mask uint8) string {
		return fn(func(d int) string { return tla(bit(mask, d)) })
	}
	msgs := make([]string, s.NetLen)
	for i := range msgs {
		msgs[i] = m.msgs[s.Net[i]].tlaValue()
	}
	return [][2]string{
		{"epoch", fmt.Sprint(s.Epoch)},
		{"liveness", fmt.Sprintf("%q", s.Liveness.String())},
		{"admissionClosed", tla(s.AdmissionClosed)},
		{"pc", fn(func(d int) string { return fmt.Sprintf("%q", s.Pc[d].String()) })},
		{"count", fmt.Sprint(s.Count)},
		{"subscribed", boolFn(s.Subscribed)},
		{"schemaRef", boolFn(s.SchemaRef)},
		{"removed", boolFn(s.Removed)},
		{"registrations", fmt.Sprint(s.Registrations)},
		{"coordEpoch", fmt.Sprint(s.CoordEpoch)},
		{"coordLiveness", fmt.Sprintf("%q", s.CoordLiveness.String())},
		{"coordCount", fmt.Sprint(s.CoordCount)},
		{"work", fmt.Sprint(s.Work)},
		{"drainedEpoch", fmt.Sprint(s.DrainedEpoch)},
		{"cache", fmt.Sprintf("[epoch |-> %d, count |-> %d, closed |-> %s]", s.Cache.Epoch, s.Cache.Count, tla(s.Cache.Closed))},
		{"net", "{" + strings.Join(msgs, ", ") + "}"},
	}
}
