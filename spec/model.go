package spec

import (
	"fmt"
	"slices"
)

// Model is DrainRegistration.tla for one Config: the transition system
// (Init, Next), its invariants, action properties, liveness property and
// fairness. It satisfies the modelcheck interfaces Model[State],
// ActionPropertied[State], Describer[State], VarLister[State] and
// Live[State] structurally. A Model is immutable and safe for concurrent
// use.
type Model struct {
	cfg  Config
	nd   int   // number of dispatchers
	nb   int   // number of brokers
	tt   uint8 // bitmask of table triggers
	all  uint8 // bitmask of all dispatchers
	allB uint8 // bitmask of all brokers

	versions []Version // Versions, in the order "new", "legacy"

	heartbeat bool // Transport = "heartbeat"
	bugs      Bug

	maxEpoch, maxReg, maxMsgs int8

	// The message universe: msgID(m) indexes it, msgs decodes it.
	countLo, nCount int
	msgs            []Msg

	fairKeys []string
}

// New returns the model for cfg, after cfg.Validate.
func New(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Dispatchers = slices.Sorted(slices.Values(cfg.Dispatchers))
	cfg.TableTriggers = slices.Sorted(slices.Values(cfg.TableTriggers))
	cfg.Brokers = slices.Sorted(slices.Values(cfg.Brokers))
	m := &Model{
		cfg:       cfg,
		nd:        len(cfg.Dispatchers),
		nb:        len(cfg.Brokers),
		heartbeat: cfg.Transport == TransportHeartbeat,
		bugs:      cfg.Bugs,
		maxEpoch:  int8(cfg.MaxEpoch),
		maxReg:    int8(cfg.MaxReg),
		maxMsgs:   int8(cfg.MaxMsgs),
	}
	m.allB = 1<<m.nb - 1
	for _, v := range []Version{VersionNew, VersionLegacy} {
		if slices.Contains(cfg.Versions, v.String()) {
			m.versions = append(m.versions, v)
		}
	}
	for d, name := range cfg.Dispatchers {
		m.all |= 1 << d
		if slices.Contains(cfg.TableTriggers, name) {
			m.tt |= 1 << d
		}
	}
	// Counts == (-MaxReg..MaxReg) \cup {None}.
	m.countLo = min(-cfg.MaxReg, None)
	m.nCount = cfg.MaxReg - m.countLo + 1
	n := int(numKinds) * (cfg.MaxEpoch + 1) * 4 * m.nCount * 2
	if n >= int(noMsg) {
		return nil, fmt.Errorf("%w: message universe too large (%d)", ErrConstant, n)
	}
	m.msgs = make([]Msg, n)
	for k := Kind(0); k < numKinds; k++ {
		for e := 0; e <= cfg.MaxEpoch; e++ {
			ep := int8(e)
			if e == 0 {
				ep = None
			}
			for l := Alive; l <= NoLiveness; l++ {
				for c := m.countLo; c <= cfg.MaxReg; c++ {
					for _, cl := range []bool{false, true} {
						msg := Msg{k, ep, l, int8(c), cl}
						m.msgs[m.msgID(msg)] = msg
					}
				}
			}
		}
	}
	m.fairKeys = m.buildFairKeys()
	return m, nil
}

// Config returns the model's constants (dispatchers sorted).
func (m *Model) Config() Config { return m.cfg }

// msgID is the index of msg in the message universe.
func (m *Model) msgID(msg Msg) msgID {
	e := int(msg.Epoch)
	if e < 0 {
		e = 0
	}
	c := int(msg.Count) - m.countLo
	if c < 0 || c >= m.nCount {
		panic(fmt.Sprintf("spec: count %d outside -MaxReg..MaxReg", msg.Count))
	}
	id := ((int(msg.Kind)*(m.cfg.MaxEpoch+1)+e)*4+int(msg.Liveness))*m.nCount + c
	return msgID(id*2 + int(b2u(msg.Closed)))
}

// Msg decodes a message ID of s.Net.
func (m *Model) Msg(id uint16) Msg { return m.msgs[id] }

// Dispatcher returns the name of dispatcher index d.
func (m *Model) Dispatcher(d int) string { return m.cfg.Dispatchers[d] }

// Broker returns the name of broker index b.
func (m *Model) Broker(b int) string { return m.cfg.Brokers[b] }

func (m *Model) has(b Bug) bool { return m.bugs&b != 0 }

func (m *Model) isTT(d int) bool { return bit(m.tt, d) }

// Init emits the initial states (TLA+ Init): one per version in Versions.
func (m *Model) Init(emit func(s State)) {
	for _, v := range m.versions {
		s := m.InitState()
		s.Version = v
		emit(s)
	}
}

// InitState returns the initial state (TLA+ Init) whose process runs the
// first of Versions ("new" when it is there).
func (m *Model) InitState() State {
	s := State{
		Epoch:         1,
		Version:       m.versions[0],
		Liveness:      Alive,
		Removed:       m.all,
		Sample:        noSample,
		LastReport:    noLastReport,
		CoordEpoch:    1,
		CoordVersion:  VersionUnknown,
		CoordLiveness: Alive,
		CoordCount:    None,
		Work:          1,
		DrainedEpoch:  None,
		LegacyEpoch:   None,
		Cache:         noReport,
	}
	for d := range s.Brk {
		s.Brk[d] = NoBroker
	}
	for i := range s.Net {
		s.Net[i] = noMsg
	}
	return s
}

// NetMsgs returns the messages in flight in s.
func (m *Model) NetMsgs(s State) []Msg {
	out := make([]Msg, s.NetLen)
	for i := range out {
		out[i] = m.msgs[s.Net[i]]
	}
	return out
}
