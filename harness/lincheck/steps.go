package lincheck

import (
	"math/bits"

	"github.com/drainproof/drainproof/tla/names"
)

// This file is the sequential specification, one function per step kind
// (as package spec has one function per action). Where a step is the
// model's action (tla/DrainRegistration.tla) it has the action's name:
// brokerAdmit, brokerUnsubscribe, brokerRollback, serviceCloseBroker,
// serviceFinishClose, serviceStartReport, serviceReadBroker, and
// collectorRemove for a table trigger. The others are the caller-visible
// steps of lincheck's own granularity (see the package documentation).

// stepFunc is one step kind: whether the step is legal in s, and the
// next state.
type stepFunc func(s State, in *Input) (bool, State)

// stepTable gives each step its one name and its function: the model's
// action where the step is one (names' constant), lincheck's own name
// otherwise.
var stepTable = [...]struct {
	name string
	fn   stepFunc
}{
	stepAdmit:        {names.BrokerAdmit.String(), brokerAdmit},
	stepOldRelease:   {"old-release", releaseOld},
	stepOldDrop:      {"old-drop", dropOld},
	stepSubscribe:    {names.BrokerSubscribe.String(), brokerSubscribe},
	stepFailRelease:  {names.BrokerUnsubscribe.String(), brokerUnsubscribe},
	stepFailRollback: {names.BrokerRollback.String(), brokerRollback},
	stepFinish:       {"finish", finishTrigger},
	stepRelease:      {"release", removeRelease},
	stepDecrement:    {"decrement", removeDecrement},
	stepRemove:       {names.CollectorRemove.String(), collectorRemove},
	stepReset:        {"reset", reset},
	stepStart:        {"start", cleanupStart},
	stepCloseBroker:  {names.ServiceCloseBroker.String(), serviceCloseBroker},
	stepClosed:       {names.ServiceFinishClose.String(), serviceFinishClose},
	stepGate:         {names.ServiceStartReport.String(), serviceStartReport},
	stepCount:        {names.ServiceReadBroker.String(), serviceReadBroker},
	stepSubscribers:  {"subscribers", subscribers},
	stepAudit:        {"audit", audit},
	stepAssume:       {"assume", assume},
}

// step is the sequential specification: it returns whether the step is
// legal in s and the next state.
func step(s State, in *Input) (bool, State) {
	if int(in.Step) >= len(stepTable) || stepTable[in.Step].fn == nil {
		return false, s
	}
	return stepTable[in.Step].fn(s, in)
}

// target returns the bit of the step's dispatcher and its broker (0 and
// broker 0 when the operation names none).
func (in *Input) target() (uint16, int) {
	if in.id < 0 {
		return 0, 0
	}
	return 1 << in.id, BrokerOf(in.id)
}

// brokerAdmit (register): the gate check and the early count are one
// compare-and-swap on the broker's gate word: admitted iff its gate bit is
// open. A refusal finishes the close before it returns.
func brokerAdmit(s State, in *Input) (bool, State) {
	op := in.Op
	bit, k := in.target()
	gateBit := uint8(1) << k
	var ok bool
	if op.Err == ErrAdmissionClosed {
		if s.Bits&gateBit == 0 {
			return false, s
		}
		s, ok = loopStep(s, in, true)
		s.Bits, s.Closed = 1<<NumBrokers-1, true
		return ok, s
	}
	if s.Bits&gateBit != 0 || op.Err != expectedRegisterErr(in) {
		return false, s
	}
	if s, ok = loopStep(s, in, false); !ok {
		return false, s
	}
	s.Count[k]++
	if s.Reg&bit != 0 {
		s.Arg = 1 // replaces an old registration (F-R3)
	}
	return true, s
}

// releaseOld (register): a replaced registration's store release.
func releaseOld(s State, in *Input) (bool, State) {
	bit, _ := in.target()
	s, ok := loopStep(s, in, false)
	if !ok {
		return false, s
	}
	if s.Arg == 1 {
		s.Reg &^= bit
		s.Held &^= bit
		s.Epoch[in.id] = 0
	}
	return true, s
}

// dropOld (register): a replaced registration's decrement.
func dropOld(s State, in *Input) (bool, State) {
	_, k := in.target()
	old := s.Arg == 1
	s, ok := loopStep(s, in, false)
	if !ok {
		return false, s
	}
	if old {
		s.Count[k]--
	}
	s.Arg = 0
	return true, s
}

// brokerSubscribe (register): RegisterDispatcher; refused, the count rolls
// back; ok, the registration is published (RegisterTable succeeded); a
// failing RegisterTable leaves the subscription held until
// brokerUnsubscribe.
func brokerSubscribe(s State, in *Input) (bool, State) {
	op := in.Op
	bit, k := in.target()
	s, ok := loopStep(s, in, op.Err != ErrSchema)
	if !ok {
		return false, s
	}
	switch op.Err {
	case ErrNotReusable:
		s.Count[k]-- // rollback; nothing was subscribed
	case ErrNone:
		s.Held |= bit
		s.Reg |= bit
		s.Epoch[in.id] = 0
	case ErrSchema:
		s.Held |= bit
	}
	return true, s
}

// brokerUnsubscribe (register): RegisterTable failed, the subscription is
// released.
func brokerUnsubscribe(s State, in *Input) (bool, State) {
	bit, _ := in.target()
	s, ok := loopStep(s, in, false)
	if !ok {
		return false, s
	}
	s.Held &^= bit
	return true, s
}

// brokerRollback (register): RegisterTable failed, the count rolls back,
// last.
func brokerRollback(s State, in *Input) (bool, State) {
	_, k := in.target()
	s, ok := loopStep(s, in, true)
	if !ok {
		return false, s
	}
	s.Count[k]--
	return true, s
}

// finishTrigger (register of a table trigger): drop the old registration,
// publish.
func finishTrigger(s State, in *Input) (bool, State) {
	bit, k := in.target()
	old := s.Arg == 1
	s, ok := loopStep(s, in, true)
	if !ok {
		return false, s
	}
	if old {
		s.Count[k]--
	}
	s.Reg |= bit
	s.Epoch[in.id] = 0
	return true, s
}

// collectorRemove (remove of a table trigger): one step.
func collectorRemove(s State, in *Input) (bool, State) {
	bit, k := in.target()
	s, ok := loopStep(s, in, true)
	if !ok {
		return false, s
	}
	if s.Reg&bit != 0 {
		s.Reg &^= bit
		s.Epoch[in.id] = 0
		s.Count[k]--
	}
	return true, s
}

// removeRelease (remove, cleanup): delete and store release; the cleanup
// removes the next dispatcher of its set.
func removeRelease(s State, in *Input) (bool, State) {
	var ok bool
	if in.Op.Kind == KindCleanup {
		if s, ok = loopStep(s, in, false); !ok || s.Arg == 0 {
			return false, s
		}
		i := nextCleanup(s.Arg)
		j := uint16(1) << i
		s.Reg &^= j
		s.Held &^= j
		s.Epoch[i] = 0
		return true, s
	}
	bit, _ := in.target()
	present := s.Reg&bit != 0
	if s, ok = loopStep(s, in, false); !ok {
		return false, s
	}
	if present {
		s.Reg &^= bit
		s.Held &^= bit
		s.Epoch[in.id] = 0
		s.Arg = 1
	}
	return true, s
}

// removeDecrement (remove, cleanup): the decrement, last for a removal;
// the cleanup decrements the dispatcher it released last.
func removeDecrement(s State, in *Input) (bool, State) {
	var ok bool
	if in.Op.Kind == KindCleanup {
		arg := s.Arg
		if s, ok = loopStep(s, in, in.Index == in.n-1); !ok || arg == 0 {
			return false, s
		}
		i := nextCleanup(arg)
		s.Count[BrokerOf(i)]--
		if in.Index < in.n-1 {
			s.Arg = arg &^ (1 << i)
		}
		return true, s
	}
	_, k := in.target()
	present := s.Arg == 1
	if s, ok = loopStep(s, in, true); !ok {
		return false, s
	}
	if present {
		s.Count[k]--
	}
	return true, s
}

// reset: fails for an unpublished dispatcher, and moves a published one
// only to a newer epoch (R6).
func reset(s State, in *Input) (bool, State) {
	op := in.Op
	bit, _ := in.target()
	registered := s.Reg&bit != 0
	if (op.Err == ErrNone) != registered {
		return false, s
	}
	s, ok := loopStep(s, in, true)
	if !ok {
		return false, s
	}
	if registered && op.Epoch > s.Epoch[in.id] {
		s.Epoch[in.id] = op.Epoch
	}
	return true, s
}

// cleanupStart (cleanup): the inactive dispatchers, every one that has
// handshaked, or every one once admission is closed.
func cleanupStart(s State, in *Input) (bool, State) {
	var eligible uint16
	for i := range NumIDs {
		if s.Reg&(1<<i) != 0 && (s.Epoch[i] > 0 || s.Closed) {
			eligible |= 1 << i
		}
	}
	if bits.OnesCount16(eligible) != in.Op.Removed {
		return false, s
	}
	s, ok := loopStep(s, in, in.n == 1)
	if !ok {
		return false, s
	}
	if in.n > 1 {
		s.Arg = eligible
	}
	return true, s
}

// serviceCloseBroker (close): broker in.Index's gate bit, in broker order.
func serviceCloseBroker(s State, in *Input) (bool, State) {
	c := uint32(1) << in.Op.Client
	j := in.Index
	if j == 0 {
		for _, m := range s.Cls {
			if m&c != 0 {
				return false, s
			}
		}
	} else if s.Cls[j-1]&c == 0 {
		return false, s
	} else {
		s.Cls[j-1] &^= c
	}
	s.Cls[j] |= c
	s.Bits |= 1 << j
	return true, s
}

// serviceFinishClose (close): the closed flag, after every broker's bit.
func serviceFinishClose(s State, in *Input) (bool, State) {
	c := uint32(1) << in.Op.Client
	if s.Cls[NumBrokers-1]&c == 0 {
		return false, s
	}
	s.Cls[NumBrokers-1] &^= c
	s.Closed = true
	return true, s
}

// serviceStartReport (report): the gate read.
func serviceStartReport(s State, in *Input) (bool, State) {
	c := uint32(1) << in.Op.Client
	for _, m := range s.Rep {
		if m&c != 0 {
			return false, s
		}
	}
	if in.Op.Closed != s.Closed {
		return false, s
	}
	s.Rep[0] |= c
	return true, s
}

// serviceReadBroker (report): broker in.Index-1's count, in broker order;
// the last read must give the reported sum.
func serviceReadBroker(s State, in *Input) (bool, State) {
	op := in.Op
	c := uint32(1) << op.Client
	j := in.Index - 1
	if s.Rep[j]&c == 0 {
		return false, s
	}
	s.Rep[j] &^= c
	sum := s.Partial[op.Client] + s.Count[j]
	if j < NumBrokers-1 {
		s.Rep[j+1] |= c
		s.Partial[op.Client] = sum
		return true, s
	}
	if int64(sum) != op.Count {
		return false, s
	}
	s.Partial[op.Client] = 0
	return true, s
}

// subscribers: the event store's subscriptions are the held set.
func subscribers(s State, in *Input) (bool, State) { return in.held == s.Held, s }

// audit: the quiescent audit saw exactly the model's state.
func audit(s State, in *Input) (bool, State) {
	want, err := auditState(in.Op)
	return err == nil && s == want, s
}

// assume: a partition's first step takes the audit's state.
func assume(s State, in *Input) (bool, State) {
	want, err := auditState(in.Op)
	return err == nil, want
}
