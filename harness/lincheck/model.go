package lincheck

import (
	"cmp"
	"context"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Step names one atomic step of a client operation. The request loop's
// requests take several steps that callers can tell apart (through
// reports and the event store's subscribers); each becomes one porcupine
// operation with the request's interval.
type Step uint8

// The steps.
const (
	stepAdmit        Step = iota // register: the admission gate and the early count (BrokerAdmit)
	stepOldRelease               // register: a replaced registration's store release
	stepOldDrop                  // register: a replaced registration's decrement
	stepSubscribe                // register: RegisterDispatcher (refused: rollback; ok: publish)
	stepFailRelease              // register: RegisterTable failed, subscription released
	stepFailRollback             // register: RegisterTable failed, count rolled back
	stepFinish                   // register of a table trigger: replace and publish
	stepRelease                  // remove / cleanup: delete and store release
	stepDecrement                // remove / cleanup: decrement
	stepRemove                   // remove of a table trigger: one step
	stepReset                    // reset
	stepStart                    // cleanup: pick the inactive dispatchers
	stepCloseBroker              // close admission: set broker Index's gate bit
	stepClosed                   // close admission: set the service's closed flag
	stepGate                     // report: read the admission gate
	stepCount                    // report: read broker Index-1's count
	stepSubscribers              // read the event store's subscribers
	stepAudit                    // quiescent audit: check the whole state
	stepAssume                   // first step of a partition: take the audit's state
)

// String returns the step's name: the model's action name where the step
// is one of the model's actions (BrokerAdmit), lincheck's own otherwise.
func (s Step) String() string {
	if int(s) < len(stepTable) && stepTable[s].name != "" {
		return stepTable[s].name
	}
	return fmt.Sprintf("Step(%d)", uint8(s))
}

// Input is the input of one porcupine operation: step Index of client
// operation Op (a pointer into the history) whose loop request is Req.
type Input struct {
	Op    *Op
	Step  Step
	Index int // position of the step in its operation's template
	Req   int32
	id    int // dispatcher index, -1 if none
	n     int // number of steps of the operation
	held  uint16
}

// State is the model state: what the service's callers can tell about it.
// It is a comparable value; the zero value is not the initial state (see
// [Model]'s Init).
type State struct {
	// Reg is the set of published dispatchers (bit i = index i).
	Reg uint16
	// Held is the set of dispatchers subscribed in the event store.
	Held uint16
	// Count is each broker's dispatcher count.
	Count [NumBrokers]int16
	// Closed is the service's admission flag; Bits holds the brokers
	// whose copy of the gate (the gate bit) is closed.
	Closed bool
	Bits   uint8
	// Epoch is each published dispatcher's epoch (0 if unpublished).
	Epoch [NumIDs]uint8
	// Rep[j] holds the clients whose report has read the gate and the
	// counts of the brokers before j, and reads broker j's next; Partial
	// is such a report's sum so far.
	Rep     [NumBrokers]uint32
	Partial [MaxClients]int16
	// Cls[j] holds the clients whose close has closed the gate bits of
	// brokers 0..j and not yet the next.
	Cls [NumBrokers]uint32
	// Req is the request the serial loop is in the middle of (0: none);
	// Stage is its next step's index; Arg is its private data: whether a
	// registration replaced an old one, the remaining dispatchers of a
	// cleanup.
	Req   int32
	Stage uint8
	Arg   uint16
}

// String renders s like "count=2+0 open reg={d0@3,t1} held={d0}"
// (one count per broker; "closing=01" while some gate bits are closed and
// the flag not yet).
func (s State) String() string {
	var b strings.Builder
	b.WriteString("count=")
	for k, n := range s.Count {
		if k > 0 {
			b.WriteString("+")
		}
		fmt.Fprintf(&b, "%d", n)
	}
	switch {
	case s.Closed:
		b.WriteString(" closed")
	case s.Bits != 0:
		fmt.Fprintf(&b, " closing=%0*b", NumBrokers, s.Bits)
	default:
		b.WriteString(" open")
	}
	b.WriteString(" reg={")
	for i, n := range maskNames(s.Reg) {
		if i > 0 {
			b.WriteString(",")
		}
		idx, _ := ParseID(n)
		if s.Epoch[idx] > 0 {
			fmt.Fprintf(&b, "%s@%d", n, s.Epoch[idx])
		} else {
			b.WriteString(n)
		}
	}
	fmt.Fprintf(&b, "} held={%s}", strings.Join(maskNames(s.Held), ","))
	if s.Req != 0 {
		fmt.Fprintf(&b, " loop=req%d/step%d", s.Req, s.Stage)
	}
	return b.String()
}

func (s *State) hash() uint64 {
	h := uint64(s.Reg) | uint64(s.Held)<<16 | uint64(s.Stage)<<48 | uint64(s.Bits)<<56
	if s.Closed {
		h |= 1 << 63
	}
	for k := range NumBrokers {
		h ^= (uint64(uint16(s.Count[k])) | uint64(s.Rep[k])<<16 ^ uint64(s.Cls[k])<<32) * (0x9e3779b97f4a7c15 + uint64(k)<<1)
	}
	for c, p := range s.Partial {
		if p != 0 {
			h ^= (uint64(uint16(p)) + uint64(c)<<16) * 0xd6e8feb86659fd93
		}
	}
	h ^= (uint64(uint32(s.Req)) | uint64(s.Arg)<<32) * 0xc2b2ae3d27d4eb4f
	for i, e := range s.Epoch {
		h ^= uint64(e) << (7 * uint(i) % 61)
	}
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	return h ^ h>>32
}

// template returns the steps of a client operation, given its outcome.
func template(op *Op, id int) []Step {
	switch op.Kind {
	case KindRegister:
		switch {
		case op.Err == ErrAdmissionClosed:
			return []Step{stepAdmit}
		case isTrigger(id):
			return []Step{stepAdmit, stepFinish}
		case op.Err == ErrSchema:
			return []Step{stepAdmit, stepOldRelease, stepOldDrop, stepSubscribe, stepFailRelease, stepFailRollback}
		default:
			return []Step{stepAdmit, stepOldRelease, stepOldDrop, stepSubscribe}
		}
	case KindRemove:
		if isTrigger(id) {
			return []Step{stepRemove}
		}
		return []Step{stepRelease, stepDecrement}
	case KindReset:
		return []Step{stepReset}
	case KindCleanup:
		out := []Step{stepStart}
		for range op.Removed {
			out = append(out, stepRelease, stepDecrement)
		}
		return out
	case KindClose:
		out := make([]Step, 0, NumBrokers+1)
		for range NumBrokers {
			out = append(out, stepCloseBroker)
		}
		return append(out, stepClosed)
	case KindReport:
		out := make([]Step, 0, NumBrokers+1)
		out = append(out, stepGate)
		for range NumBrokers {
			out = append(out, stepCount)
		}
		return out
	case KindSubscribers:
		return []Step{stepSubscribers}
	case KindAudit:
		return []Step{stepAudit}
	}
	panic(fmt.Sprintf("lincheck: unknown kind %q", op.Kind))
}

// Operations expands h into porcupine operations: one per step of each
// client operation, all with the operation's client and interval. h must
// be valid ([History.Validate]); the operations point into h.Ops.
func (h *History) Operations() []porcupine.Operation {
	templates := make([][]Step, len(h.Ops))
	ids := make([]int, len(h.Ops))
	total := 0
	for i := range h.Ops {
		ids[i] = -1
		if h.Ops[i].ID != "" {
			ids[i], _ = ParseID(h.Ops[i].ID)
		}
		templates[i] = template(&h.Ops[i], ids[i])
		total += len(templates[i])
	}
	out := make([]porcupine.Operation, 0, total)
	inputs := make([]Input, 0, total)
	for i := range h.Ops {
		op := &h.Ops[i]
		var held uint16
		if op.Held != nil {
			held, _ = heldMask(op.Held)
		}
		req := int32(i + 1)
		for k, st := range templates[i] {
			inputs = append(inputs, Input{Op: op, Step: st, Index: k, Req: req, id: ids[i], n: len(templates[i]), held: held})
			out = append(out, porcupine.Operation{
				ClientId: op.Client, Input: &inputs[len(inputs)-1], Call: op.Call, Output: op, Return: op.Return,
				Metadata: i,
			})
		}
	}
	return out
}

// initState is the state of a fresh service.
func initState() State { return State{} }

// loopStep checks that in is the next step of the serial loop and returns
// the state with the loop advanced; last ends the request.
func loopStep(s State, in *Input, last bool) (State, bool) {
	if in.Index == 0 {
		if s.Req != 0 {
			return s, false // R7: one request at a time
		}
	} else if s.Req != in.Req || int(s.Stage) != in.Index {
		return s, false
	}
	if last {
		s.Req, s.Stage, s.Arg = 0, 0, 0
	} else {
		s.Req, s.Stage = in.Req, uint8(in.Index+1)
	}
	return s, true
}

// nextCleanup returns the dispatcher of set (not empty) that the
// inactivity cleanup removes next: it walks the brokers in order and each
// broker's dispatchers in ID order.
func nextCleanup(set uint16) int {
	for k := range NumBrokers {
		for i := k; i < NumIDs; i += NumBrokers { // BrokerOf(i) == k
			if set&(1<<i) != 0 {
				return i
			}
		}
	}
	panic("lincheck: nextCleanup of an empty set")
}

// expectedRegisterErr is what an admitted registration returns.
func expectedRegisterErr(in *Input) Err {
	if isTrigger(in.id) {
		return ErrNone
	}
	switch in.Op.Fault {
	case FaultRefuse:
		return ErrNotReusable
	case FaultSchema:
		return ErrSchema
	}
	return ErrNone
}

// auditState is the state an audit observed: quiescent, so no request is
// in the middle of the loop and no report is half done; the schema
// references must be one per published ordinary dispatcher (R9).
func auditState(op *Op) (State, error) {
	var s State
	for name, e := range op.Registered {
		i, err := ParseID(name)
		if err != nil {
			return s, err
		}
		s.Reg |= 1 << i
		s.Epoch[i] = e
	}
	held, err := heldMask(op.Held)
	if err != nil {
		return s, err
	}
	if op.Refs != bits.OnesCount16(s.Reg&ordinaryMask) {
		return s, fmt.Errorf("refs %d, want one per published ordinary dispatcher", op.Refs)
	}
	s.Held = held
	for k, n := range op.Counts { // none when every count is 0
		s.Count[k] = int16(n)
		if int64(s.Count[k]) != n {
			return s, fmt.Errorf("count %d out of range", n)
		}
	}
	s.Closed = op.Closed
	if s.Closed {
		s.Bits = 1<<NumBrokers - 1
	}
	return s, nil
}

// describeOp renders a client operation for the visualization.
func describeOp(op *Op) string {
	switch op.Kind {
	case KindRegister:
		s := "Register(" + op.ID
		if op.Fault != NoFault {
			s += ", fault=" + string(op.Fault)
		}
		return s + ") → " + errString(op.Err)
	case KindRemove:
		return "Remove(" + op.ID + ")"
	case KindReset:
		return fmt.Sprintf("Reset(%s, epoch %d) → %s", op.ID, op.Epoch, errString(op.Err))
	case KindCleanup:
		return fmt.Sprintf("Cleanup() → %d removed", op.Removed)
	case KindClose:
		return "CloseAdmission()"
	case KindReport:
		return fmt.Sprintf("Report() → (%d, closed=%v)", op.Count, op.Closed)
	case KindSubscribers:
		return "Subscribers() → {" + strings.Join(op.Held, ",") + "}"
	case KindAudit:
		names := make([]string, 0, len(op.Registered))
		for n, e := range op.Registered {
			if e > 0 {
				n = fmt.Sprintf("%s@%d", n, e)
			}
			names = append(names, n)
		}
		slices.Sort(names)
		return fmt.Sprintf("Audit() → count=%d %v closed=%v reg={%s} held={%s} refs=%d",
			op.Count, op.Counts, op.Closed, strings.Join(names, ","), strings.Join(op.Held, ","), op.Refs)
	}
	return string(op.Kind)
}

func errString(e Err) string {
	if e == ErrNone {
		return "ok"
	}
	return string(e)
}

// Model is the sequential specification of the event service as its
// callers see it, over the steps of [History.Operations]: the published
// set with epochs, the event store's subscriptions, the count, the
// admission gate, and the serial loop's current request (R7). It
// partitions a history at quiescent audits ([Partition]); Init, the
// per-step StepContext, Equal (==), Hash, DescribeOperation and
// DescribeState are set. Its states are [State] values.
var Model = porcupine.Model{
	Partition: Partition,
	Init:      func() any { return initState() },
	// Each step is a constant-time operation on a small value, so the
	// context (porcupine checks it between steps) needs no polling here.
	StepContext: func(_ context.Context, state, input, _ any) (bool, any) {
		ok, next := step(state.(State), input.(*Input))
		if !ok {
			return false, nil // porcupine ignores it; do not box it
		}
		return true, next
	},
	Equal: func(a, b any) bool { return a.(State) == b.(State) },
	Hash: func(state any) uint64 {
		s := state.(State)
		return s.hash()
	},
	DescribeOperation: func(input, _ any) string {
		in := input.(*Input)
		return describeOp(in.Op) + " · " + in.Step.String()
	},
	DescribeState: func(state any) string { return state.(State).String() },
}

// Partition cuts a history at its quiescent audits: an audit whose
// interval overlaps no other operation's. The audit ends the partition
// before it (where it checks the whole state) and, as an assume step,
// starts the one after it (where it sets the state it observed). See the
// package documentation for why this is sound.
func Partition(history []porcupine.Operation) [][]porcupine.Operation {
	if len(history) == 0 {
		return nil
	}
	ops, at := cuts(history)
	parts := make([][]porcupine.Operation, 0, len(at)+1)
	start := 0
	for _, i := range at {
		parts = append(parts, slices.Clone(ops[start:i+1]))
		a := *ops[i].Input.(*Input)
		a.Step = stepAssume
		ops[i].Input = &a
		start = i
	}
	return append(parts, ops[start:])
}

// cuts returns history sorted by call time and the indices of its
// quiescent audits: audits whose closed interval meets no other
// operation's.
func cuts(history []porcupine.Operation) ([]porcupine.Operation, []int) {
	ops := slices.Clone(history)
	slices.SortStableFunc(ops, func(a, b porcupine.Operation) int { return cmp.Compare(a.Call, b.Call) })
	var at []int
	var maxRet int64 = -1 // the latest return among ops[:i]
	for i, op := range ops {
		if op.Input.(*Input).Step == stepAudit && op.Call > maxRet && (i+1 == len(ops) || ops[i+1].Call > op.Return) {
			at = append(at, i)
		}
		maxRet = max(maxRet, op.Return)
	}
	return ops, at
}
