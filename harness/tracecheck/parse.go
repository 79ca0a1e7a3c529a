package tracecheck

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/drainproof/drainproof/spec"
)

// scanner reads one JSON line without allocating: objects are walked key
// by key, strings are returned as slices of the line (a string with an
// escape is unquoted into a new slice).
type scanner struct {
	b          []byte
	i          int
	err        error
	outOfRange bool   // an integer past the int8 range was read
	last       []byte // the string enumOf did not find
}

func (p *scanner) fail(format string, a ...any) bool {
	if p.err == nil {
		p.err = fmt.Errorf("column %d: %s", p.i+1, fmt.Sprintf(format, a...))
	}
	return false
}

func (p *scanner) ws() {
	if p.i < len(p.b) && p.b[p.i] > ' ' {
		return // the common case: no white space
	}
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *scanner) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

func (p *scanner) expect(c byte) bool {
	if p.peek() != c {
		if p.i >= len(p.b) {
			return p.fail("unexpected end of line, want %q", c)
		}
		return p.fail("want %q, got %q", c, p.b[p.i])
	}
	p.i++
	return true
}

// str reads a JSON string.
func (p *scanner) str() ([]byte, bool) {
	if !p.expect('"') {
		return nil, false
	}
	b, start := p.b, p.i
	for i := start; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			p.i = i + 1
			return b[start:i], true
		case c == '\\':
			p.i = i
			return p.escaped(start)
		case c < 0x20:
			p.i = i
			return nil, p.fail("control character in a string")
		}
	}
	p.i = len(b)
	return nil, p.fail("unterminated string")
}

// escaped finishes a string that has an escape, with encoding/json: a
// JSON string's escapes are not Go's (JSON has \/ and surrogate pairs,
// Go has \x, \U, octal and a raw tab), so strconv.Unquote would refuse
// some JSON and take some that is not.
func (p *scanner) escaped(start int) ([]byte, bool) {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if err := json.Unmarshal(p.b[start-1:p.i], &s); err != nil {
				return nil, p.fail("bad string: %v", err)
			}
			return []byte(s), true
		}
		p.i++
	}
	return nil, p.fail("unterminated string")
}

// integer reads a JSON integer. A value outside the int8 range of the
// model's values is not an input error: it is returned saturated, with
// p.outOfRange set (the line is past the model's bounds).
func (p *scanner) integer() (int8, bool) {
	p.ws()
	neg := false
	if p.i < len(p.b) && p.b[p.i] == '-' {
		neg = true
		p.i++
	}
	start := p.i
	var n int
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		if n <= 1<<20 {
			n = n*10 + int(p.b[p.i]-'0')
		}
		p.i++
	}
	if p.i == start {
		return 0, p.fail("want an integer")
	}
	if p.i-start > 1 && p.b[start] == '0' {
		return 0, p.fail("want an integer, got a leading zero")
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return 0, p.fail("want an integer, got a fraction")
	}
	if neg {
		n = -n
	}
	if n < -128 || n > 127 {
		p.outOfRange = true
		n = max(-128, min(127, n))
	}
	return int8(n), true
}

func (p *scanner) literal(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

func (p *scanner) boolean() (bool, bool) {
	p.ws()
	switch {
	case p.literal("true"):
		return true, true
	case p.literal("false"):
		return false, true
	}
	return false, p.fail("want true or false")
}

// object walks an object, calling key for each key with the scanner at
// its value; key must consume the value.
func (p *scanner) object(key func(k []byte) bool) bool {
	if !p.expect('{') {
		return false
	}
	return p.members(key)
}

// members reads the rest of an object whose '{' was read: its members,
// each key handed to key, and the closing '}'.
func (p *scanner) members(key func(k []byte) bool) bool {
	if p.peek() == '}' {
		p.i++
		return true
	}
	for {
		k, ok := p.str()
		if !ok || !p.expect(':') || !key(k) {
			return false
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return true
		default:
			return p.fail("want ',' or '}'")
		}
	}
}

// enumOf reads a string and returns its index in names; false (with
// p.last set, p.err unset) when it is not one.
func (p *scanner) enumOf(names []string) (int8, bool) {
	s, ok := p.str()
	if !ok {
		return 0, false
	}
	for i, n := range names {
		if n == string(s) {
			return int8(i), true
		}
	}
	p.last = s
	return 0, false
}

// enum reads a string that must be one of names.
func (p *scanner) enum(what string, names []string) (int8, bool) {
	s, ok := p.str()
	if !ok {
		return 0, false
	}
	for i, n := range names {
		if n == string(s) {
			return int8(i), true
		}
	}
	return 0, p.fail("unknown %s %q (want one of %v)", what, s, names)
}

// check is one observed value: variable v (element or field idx) must be
// want in the state after the step.
type check struct {
	v    uint8
	idx  int8
	want int8
}

// Message fields a line may give (msgPattern.mask bits).
const (
	mKind = 1 << iota
	mEpoch
	mLiveness
	mCount
	mClosed
)

// msgPattern matches a model message on the fields its mask names.
type msgPattern struct {
	mask uint8
	msg  spec.Msg
}

func (mp *msgPattern) matches(m spec.Msg) bool {
	return (mp.mask&mKind == 0 || m.Kind == mp.msg.Kind) &&
		(mp.mask&mEpoch == 0 || m.Epoch == mp.msg.Epoch) &&
		(mp.mask&mLiveness == 0 || m.Liveness == mp.msg.Liveness) &&
		(mp.mask&mCount == 0 || m.Count == mp.msg.Count) &&
		(mp.mask&mClosed == 0 || m.Closed == mp.msg.Closed)
}

// mFull is the mask of a message that gives every field.
const mFull = mKind | mEpoch | mLiveness | mCount | mClosed

// line is one compiled trace line. It holds no pointer (its observed
// values are a range of Checker.arena, its text an offset into the
// trace), so that a trace's lines cost the garbage collector nothing.
type line struct {
	// off is the offset of the line's text in the trace.
	off int
	// ck0, ck1: the line's observed values are Checker.arena[ck0:ck1].
	ck0, ck1 int32
	// peak: the messages in flight at the line's peak (lookahead).
	peak int32
	act  int16 // index into Checker.actions
	idx  int8  // d (or b, for an action of one broker)
	b    int8  // b, for an action of a dispatcher and a broker
	v    spec.Version
	// keep: whether the network keeps a copy of the message received (-1
	// until the lookahead decides, unless the line says).
	keep int8
	// m: the message a receive takes or a send sends; reply: the message
	// a receive answers with.
	msg, reply           msgPattern
	hasIdx, hasB, hasV   bool
	hasMsg, hasReply     bool
	lose, isRecv         bool  // lose: the message the line sent is lost at once (no later line receives it)
	isSendReg, isRecvReg bool  // the line sends or receives REGISTER(d, b)
	pastEpochs           bool  // an epoch past MaxEpoch (a rejection)
	pastRange            bool  // an integer past the int8 range of the model's values (incomplete)
	refine               uint8 // the refinement mapping's reading of the line (refine.go)
	first                bool  // the first line of a process that succeeds another (its stamp's after)
}

// checks returns the observed values of ln.
func (c *Checker) checks(ln *line) []check { return c.arena[ln.ck0:ln.ck1] }

// sentMsg is the message the line sends, if it names one.
func (ln *line) sentMsg() spec.Msg {
	if ln.hasReply {
		return ln.reply.msg
	}
	return ln.msg.msg
}

var errNoAction = errors.New(`no "action"`)

// parseLine compiles the line text into ln, its observed values into
// c.arena. Its stamp (causal.go) was read by splitStamp: the body, which
// parseLine reads, starts at body, and first says whether the stamp named
// an after (the first line of a successor). splitStamp reads the stamp at
// the line's start only, so a stamp key in the body would be ignored by
// the merge (an after, its first-line check included): it is refused.
func (c *Checker) parseLine(text []byte, body int, first bool, ln *line) error {
	p := scanner{b: text, i: body}
	*ln = line{act: -1, keep: -1, ck0: int32(len(c.arena)), first: first}
	ok := p.members(func(k []byte) bool {
		switch string(k) {
		case "action":
			s, ok := p.str()
			if !ok {
				return false
			}
			a := c.actionIdx.find(s)
			if a < 0 {
				return p.fail("unknown action %q", s)
			}
			if c.actions[a].env {
				return p.fail("%s is an environment step: a trace does not name it", s)
			}
			ln.act = int16(a)
			return true
		case "params":
			return p.object(func(k []byte) bool { return c.parseParam(&p, k, ln) })
		case "vars":
			return p.object(func(k []byte) bool { return c.parseVar(&p, k, ln) })
		case "p", "after", "c", "from":
			return p.fail(stampLate, k)
		}
		return p.fail("unknown key %q (a line has action, params, vars; p, c, after, from in a multi-process run)", k)
	})
	if ok && p.peek() != 0 {
		ok = p.fail("trailing text after the object")
	}
	if !ok {
		return p.err
	}
	if ln.act < 0 {
		return errNoAction
	}
	ln.ck1 = int32(len(c.arena))
	ln.pastRange = p.outOfRange
	ln.pastEpochs = ln.hasMsg && ln.msg.msg.Epoch > c.maxEpoch || ln.hasReply && ln.reply.msg.Epoch > c.maxEpoch
	for _, ck := range c.checks(ln) {
		ln.pastEpochs = ln.pastEpochs || isEpoch(ck) && ck.want > c.maxEpoch
	}
	if err := c.checkParams(ln); err != nil {
		return err
	}
	return c.refineLine(ln)
}

// checkParams refuses parameters the named action does not take, and
// requires those the lookahead needs (the message of a receive, the
// dispatcher and broker of a REGISTER).
func (c *Checker) checkParams(ln *line) error {
	a := &c.actions[ln.act]
	ln.isRecv = a.shape == shapeRecv
	ln.isSendReg, ln.isRecvReg = a.name == sendRegAction, a.name == recvRegAction
	switch {
	case a.shape == shapeIndex && a.param == "b":
		if ln.hasIdx {
			return fmt.Errorf("%s takes a broker b, not a dispatcher d", a.name)
		}
		ln.hasIdx, ln.idx, ln.hasB = ln.hasB, ln.b, false
	case ln.hasIdx && a.shape != shapeIndex && a.shape != shapePair:
		return fmt.Errorf("%s takes no parameter d", a.name)
	case ln.hasB && a.shape != shapePair:
		return fmt.Errorf("%s takes no parameter b", a.name)
	case a.shape == shapePair && (!ln.hasIdx || !ln.hasB):
		return fmt.Errorf("%s needs both parameters d and b", a.name)
	}
	if ln.hasV && a.shape != shapeVersion {
		return fmt.Errorf("%s takes no parameter v", a.name)
	}
	if (ln.keep >= 0 || ln.hasReply) && a.shape != shapeRecv {
		return fmt.Errorf("%s takes no parameter keep or reply (only receives do)", a.name)
	}
	if a.shape == shapeRecv && !ln.hasMsg {
		return fmt.Errorf("%s receives a message: the line must name it (params.m)", a.name)
	}
	if ln.hasMsg && ln.msg.mask != mFull || ln.hasReply && ln.reply.mask != mFull {
		return errors.New("a message must give kind, epoch, liveness, count and closed")
	}
	return nil
}

func (c *Checker) parseParam(p *scanner, k []byte, ln *line) bool {
	switch string(k) {
	case "d":
		v, ok := p.enum("dispatcher", c.dispatchers)
		ln.hasIdx, ln.idx = true, v
		return ok
	case "b":
		v, ok := p.enum("broker", c.brokers)
		ln.hasB, ln.b = true, v
		return ok
	case "v":
		v, ok := p.enum("version", versionNames)
		ln.hasV, ln.v = true, spec.Version(v)
		return ok
	case "keep":
		v, ok := p.boolean()
		ln.keep = b8(v)
		return ok
	case "m":
		ln.hasMsg = true
		return c.parseMsg(p, &ln.msg)
	case "reply":
		ln.hasReply = true
		return c.parseMsg(p, &ln.reply)
	}
	return p.fail("unknown parameter %q (d, b, v, m, reply or keep)", k)
}

func (c *Checker) parseMsg(p *scanner, mp *msgPattern) bool {
	mp.mask, mp.msg = 0, spec.Msg{}
	return p.object(func(k []byte) bool {
		var v int8
		var ok bool
		switch string(k) {
		case "kind":
			v, ok = p.enum("message kind", kindNames)
			mp.mask |= mKind
			mp.msg.Kind = spec.Kind(v)
		case "epoch":
			mp.msg.Epoch, ok = p.integer()
			mp.mask |= mEpoch
		case "liveness":
			v, ok = p.enum("liveness", livenessNames)
			mp.mask |= mLiveness
			mp.msg.Liveness = spec.Liveness(v)
		case "count":
			mp.msg.Count, ok = p.integer()
			mp.mask |= mCount
		case "closed":
			mp.msg.Closed, ok = p.boolean()
			mp.mask |= mClosed
		default:
			return p.fail("unknown message field %q (kind, epoch, liveness, count, closed)", k)
		}
		return ok
	})
}

func (c *Checker) parseVar(p *scanner, k []byte, ln *line) bool {
	vi := varIdx.find(k)
	if vi < 0 {
		return p.fail("unknown variable %q", k)
	}
	vd := &varTable[vi]
	add := func(idx, want int8) { c.arena = append(c.arena, check{uint8(vi), idx, want}) }
	if vd.kind == kUnknown && vd.dom == domScalar {
		// Every unobservable variable is a scalar; the words are those of
		// parseValue's last case, which would refuse it too.
		return p.fail("%s is not observable in a trace", vd.name)
	}
	switch vd.dom {
	case domScalar:
		v, ok := c.parseValue(p, vd, -1, vd.kind, vd.names)
		if c.sessions && uint8(vi) == varWork {
			v = mapWork(v)
		}
		add(0, v)
		return ok
	case domDisp, domBroker:
		keys, what := c.dispatchers, "dispatcher"
		if vd.dom == domBroker {
			keys, what = c.brokers, "broker"
		}
		return p.object(func(k []byte) bool {
			i := index(keys, k)
			if i < 0 {
				return p.fail("%s: unknown %s %q", vd.name, what, k)
			}
			v, ok := c.parseValue(p, vd, -1, vd.kind, vd.names)
			add(int8(i), v)
			return ok
		})
	}
	return p.object(func(k []byte) bool {
		for f, fd := range vd.fields {
			if fd.name == string(k) {
				v, ok := c.parseValue(p, vd, f, fd.kind, fd.names)
				add(int8(f), v)
				return ok
			}
		}
		return p.fail("%s: unknown field %q", vd.name, k)
	})
}

// parseValue reads one value of the given kind as a small integer: of
// variable vd, or of its field f (f ≥ 0).
func (c *Checker) parseValue(p *scanner, vd *varDef, f int, kind varKind, names []string) (int8, bool) {
	what := func() string {
		if f >= 0 {
			return vd.name + "." + vd.fields[f].name
		}
		return vd.name
	}
	switch kind {
	case kInt:
		return p.integer()
	case kBool:
		b, ok := p.boolean()
		return b8(b), ok
	case kEnum:
		v, ok := p.enumOf(names)
		if !ok && p.err == nil {
			return 0, p.fail("unknown %s %q (want one of %v)", what(), p.last, names)
		}
		return v, ok
	case kBroker:
		s, ok := p.str()
		if !ok {
			return 0, false
		}
		if string(s) == "none" {
			return spec.NoBroker, true
		}
		if i := index(c.brokers, s); i >= 0 {
			return int8(i), true
		}
		return 0, p.fail("%s: unknown broker %q", what(), s)
	case kBrokers:
		if !p.expect('[') {
			return 0, false
		}
		var mask int8
		if p.peek() == ']' {
			p.i++
			return mask, true
		}
		for {
			s, ok := p.str()
			if !ok {
				return 0, false
			}
			i := index(c.brokers, s)
			if i < 0 {
				return 0, p.fail("%s: unknown broker %q", what(), s)
			}
			mask |= 1 << i
			switch p.peek() {
			case ',':
				p.i++
			case ']':
				p.i++
				return mask, true
			default:
				return 0, p.fail("want ',' or ']'")
			}
		}
	}
	return 0, p.fail("%s is not observable in a trace", what())
}

func index(keys []string, k []byte) int {
	for i, s := range keys {
		if s == string(k) {
			return i
		}
	}
	return -1
}

// nameIndex finds a name's position in a list without hashing: among the
// names of the key's length, by comparing bytes (a trace's keys are
// short, and few names share a length).
type nameIndex [][]nameAt

// nameAt is a name and its position in the list.
type nameAt struct {
	name string
	i    int
}

// newNameIndex indexes names (the first of equal names wins).
func newNameIndex(names []string) nameIndex {
	var x nameIndex
	for i, n := range names {
		for len(x) <= len(n) {
			x = append(x, nil)
		}
		if x.find([]byte(n)) < 0 {
			x[len(n)] = append(x[len(n)], nameAt{n, i})
		}
	}
	return x
}

// find returns the position of k, or -1.
func (x nameIndex) find(k []byte) int {
	if len(k) >= len(x) {
		return -1
	}
	for _, e := range x[len(k)] {
		if e.name == string(k) {
			return e.i
		}
	}
	return -1
}

// varIdx indexes varTable by name.
var varIdx = func() nameIndex {
	names := make([]string, len(varTable))
	for i := range varTable {
		names[i] = varTable[i].name
	}
	return newNameIndex(names)
}()

// stampLate refuses a stamp key met after the line's body.
const stampLate = "%q after the line's body: the stamp (p, c, after, from) comes first"
