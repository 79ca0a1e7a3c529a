package spec

import "testing"

// Every count from -MaxReg to MaxReg (and None) has a message of its own,
// and a count past MaxReg is refused: never given another message's ID.
func TestMessageCountsInRange(t *testing.T) {
	m := mustModel(t, nil)
	lo, hi := min(-m.cfg.MaxReg, None), m.cfg.MaxReg
	ids := map[msgID]int8{}
	for c := lo; c <= hi; c++ {
		msg := Msg{KindHb, 1, Alive, int8(c), false}
		id := m.msgID(msg)
		if prev, dup := ids[id]; dup {
			t.Fatalf("counts %d and %d share ID %d", prev, c, id)
		}
		ids[id] = int8(c)
		if got := m.Msg(uint16(id)); got != msg {
			t.Errorf("count %d: ID %d decodes to %+v", c, id, got)
		}
	}
	for _, c := range []int{hi + 1, lo - 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("count %d (MaxReg %d) was given an ID", c, hi)
				}
			}()
			m.msgID(Msg{KindHb, 1, Alive, int8(c), false})
		}()
	}
}

// TypeOK refuses a REGISTER in flight to a broker past the model's last,
// for every dispatcher, and accepts one to each broker it has.
func TestTypeOKRefusesRegistersPastTheBrokers(t *testing.T) {
	m := mustModel(t, func(c *Config) { c.Brokers = []string{"b1", "b2"} })
	for d := 0; d < m.nd; d++ {
		for b := 0; b < MaxBrokers; b++ {
			s := m.InitState()
			s.Regs = regBit(d, b)
			if got, want := m.TypeOK(&s), b < m.nb; got != want {
				t.Errorf("REGISTER(d%d, b%d) in flight with %d brokers: TypeOK %v, want %v", d, b, m.nb, got, want)
			}
		}
	}
}

// TypeOK wants a count of zero for every broker past the model's last
// (the first of them included), and a count in 0..MaxReg for its own.
func TestTypeOKCountsPastTheBrokers(t *testing.T) {
	m := mustModel(t, func(c *Config) { c.Brokers = []string{"b1", "b2"} })
	for b := 0; b < MaxBrokers; b++ {
		s := m.InitState()
		s.Count[b] = 1
		if got, want := m.TypeOK(&s), b < m.nb; got != want {
			t.Errorf("count 1 at broker %d of %d: TypeOK %v, want %v", b, m.nb, got, want)
		}
	}
}

// TypeOK refuses a dispatcher's broker past the model's last (the first
// of them included), and accepts each broker the model has.
func TestTypeOKRefusesADispatchersBrokerPastTheLast(t *testing.T) {
	m := mustModel(t, func(c *Config) { c.Brokers = []string{"b1", "b2"} })
	for b := 0; b < MaxBrokers; b++ {
		s := m.InitState()
		s.Brk[0] = int8(b)
		if got, want := m.TypeOK(&s), b < m.nb; got != want {
			t.Errorf("d0's broker %d with %d brokers: TypeOK %v, want %v", b, m.nb, got, want)
		}
	}
}
