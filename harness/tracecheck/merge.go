package tracecheck

import (
	"bufio"
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/drainproof/drainproof/spec"
)

// This file merges the per-process traces of one run (docs/trace.md,
// multi-process runs) into one order that respects happens-before: the
// order of the lines' Lamport clocks (ties by process name), a
// successor's lines only once its predecessor's trace is exhausted.
// docs/trace.md argues why this one order suffices: every order that
// respects happens-before is explained by the model or none is.

// Merged is the per-process traces of one run in one order.
type Merged struct {
	// Data is the merged trace: a header (the processes' model, no
	// process) and every line, as written, stamp included.
	Data []byte
	// Files are the per-process traces, Procs their processes.
	Files, Procs []string
	// Src gives, for each line of Data after the header, the index of its
	// file and its line number there.
	Src []SrcLine
	// Cut, if set, is the first line in no order of the run (it depends
	// on a line that comes after it, or that a killed process lost): Data
	// ends before it.
	Cut *CutLine
}

// SrcLine is where a merged line comes from.
type SrcLine struct {
	File int
	Line int
}

// CutLine is a line the merge could not place, and why.
type CutLine struct {
	SrcLine
	Proc, Text, Reason string
	// Lost: it depends on a line a killed process never wrote.
	Lost bool
}

// procTrace is one process's trace being merged, read line by line.
type procTrace struct {
	file  int
	path  string
	proc  string
	after string
	f     *os.File      // nil for a trace held in memory (data)
	r     *bufio.Reader // nil for a trace held in memory
	long  []byte        // a line longer than the reader's buffer
	// data is the whole trace when it is small (smallTrace): read once,
	// its lines are slices of it, and a rewind costs nothing; off is
	// where the next line starts.
	data   []byte
	off    int
	at     int // where the line readLine returned last starts in data
	lineNo int // the head's line number
	head   stamp
	text   []byte // the head's text, valid until the next read
	body   int    // where the head's body (after its stamp) starts
	// started: a line of the trace was read (the first, whose after
	// must be the header's).
	started bool
}

// smallTrace is the size up to which a process's trace is read into
// memory whole (a short run's, a few hundred kilobytes at most): one
// read, and the second pass and the rewind without a system call. A
// larger one is read line by line through a buffer, so a run's memory
// stays in its number of processes.
var smallTrace = 1 << 20 // a variable for the tests that turn it off

// memoryBudget bounds the bytes of a run's traces held in memory (its
// small traces, until they add up to it; the rest are read line by line).
const memoryBudget = 64 << 20

// openProc opens the trace at path and reads its header: the header with
// its model undecoded (rawHeader), for the merger to compare.
// A trace of at most smallTrace bytes is read into memory while budget
// (the bytes the run may still hold) allows, and budget is reduced.
func openProc(path string, file int, budget *int) (*procTrace, rawHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, rawHeader{}, &InputError{File: path, Msg: err.Error()}
	}
	t := &procTrace{file: file, path: path}
	if st, err := f.Stat(); err == nil && st.Size() <= int64(smallTrace) && st.Size() <= int64(*budget) {
		// One read of the size it has, and a byte more to see it end.
		buf := make([]byte, st.Size()+1)
		n, err := io.ReadFull(f, buf)
		_ = f.Close()
		switch {
		case err == nil: // it grew: read it as a large one
			f, err = os.Open(path)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			t.data, err = buf[:n:n], nil
		}
		if err != nil {
			return nil, rawHeader{}, &InputError{File: path, Msg: err.Error()}
		}
		*budget -= len(t.data)
	}
	if t.data == nil {
		t.f, t.r = f, bufio.NewReaderSize(f, 64<<10)
	}
	text, ok, err := t.readLine()
	if err == nil && !ok {
		err = &InputError{File: path, Line: 1, Msg: "empty trace: no header line"}
	}
	if err != nil {
		t.close()
		return nil, rawHeader{}, err
	}
	var h rawHeader
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		t.close()
		return nil, h, &InputError{File: path, Line: 1, Msg: "bad header: " + err.Error()}
	}
	t.proc, t.after = h.Process, h.After
	return t, h, nil
}

// rawHeader is Header with the model left as its JSON text: the traces
// of one run carry one model, which the merger compares as text first.
type rawHeader struct {
	Trace   int             `json:"drainproof_trace"`
	Model   json.RawMessage `json:"model"`
	Source  string          `json:"source,omitempty"`
	Process string          `json:"process,omitempty"`
	After   string          `json:"after,omitempty"`
	Mapping string          `json:"mapping,omitempty"`
}

// close closes t's file, if it has one open.
func (t *procTrace) close() {
	if t.f != nil {
		_ = t.f.Close()
	}
}

// rewind makes t's next line its first again.
func (t *procTrace) rewind() error {
	t.lineNo, t.started = 0, false
	if t.data != nil {
		t.off = 0
		return nil
	}
	if _, err := t.f.Seek(0, io.SeekStart); err != nil {
		return &InputError{File: t.path, Msg: err.Error()}
	}
	t.r.Reset(t.f)
	return nil
}

// readLine reads the next line (without its newline).
func (t *procTrace) readLine() ([]byte, bool, error) {
	t.lineNo++
	if t.data != nil {
		if t.off >= len(t.data) {
			return nil, false, nil
		}
		line := t.data[t.off:]
		t.at = t.off
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
			t.off += i + 1
		} else {
			t.off = len(t.data)
		}
		return bytes.TrimSuffix(line, []byte("\r")), true, nil
	}
	line, err := t.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		t.long = append(t.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = t.r.ReadSlice('\n')
			t.long = append(t.long, line...)
		}
		line = t.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, &InputError{File: t.path, Line: t.lineNo, Msg: err.Error()}
	}
	if len(line) == 0 && errors.Is(err, io.EOF) {
		return nil, false, nil
	}
	line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
	return line, true, nil
}

// next reads the process's next non-empty line into its head; false at
// the end of its trace.
func (t *procTrace) next() (bool, error) {
	for {
		text, ok, err := t.readLine()
		if err != nil || !ok {
			return false, err
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		body, err := splitStamp(text, &t.head)
		if err != nil {
			return false, &InputError{File: t.path, Line: t.lineNo, Msg: err.Error()}
		}
		t.body = body
		if t.head.proc != t.proc {
			return false, &InputError{File: t.path, Line: t.lineNo,
				Msg: fmt.Sprintf("a line of process %q in the trace of %s (every line names its process: p)", t.head.proc, t.proc)}
		}
		if !t.started && t.head.after != t.after {
			return false, &InputError{File: t.path, Line: t.lineNo, Msg: firstAfterMsg(t.proc, t.head.after, t.after)}
		}
		t.started = true
		t.text = text
		return true, nil
	}
}

// firstAfterMsg says that the first line of proc names after as the
// process it succeeds where its header names header ("" none): the two
// say one thing (docs/trace.md), and the checker reads the line's.
func firstAfterMsg(proc, after, header string) string {
	switch {
	case header == "":
		return fmt.Sprintf("the first line of %s succeeds %s (after), and its header says %s succeeds no process", proc, after, proc)
	case after == "":
		return fmt.Sprintf("the first line of %s names no process it succeeds (after), and its header says it succeeds %s", proc, header)
	}
	return fmt.Sprintf("the first line of %s succeeds %s (after), and its header says it succeeds %s", proc, after, header)
}

// heads is the merge's heap of the processes' next lines.
type heads []*procTrace

// Len is the number of processes with a line to merge.
func (h heads) Len() int { return len(h) }

// Less orders the heads by clock, then process name.
func (h heads) Less(i, j int) bool {
	if h[i].head.clock != h[j].head.clock {
		return h[i].head.clock < h[j].head.clock
	}
	return h[i].proc < h[j].proc
}

// Swap swaps two heads.
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

// Push adds a process's head (container/heap).
func (h *heads) Push(x any) { *h = append(*h, x.(*procTrace)) }

// Pop removes the last head (container/heap).
func (h *heads) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// RunFiles returns the per-process traces of a run directory: its
// *.ndjson files whose header names a process. ok is false when the
// directory holds no such trace (single traces, checked one by one).
func RunFiles(dir string) (files []string, ok bool, err error) {
	m, err := filepath.Glob(filepath.Join(dir, "*.ndjson"))
	if err != nil {
		return nil, false, err
	}
	slices.Sort(m)
	for _, f := range m {
		h, err := readHeader(f)
		if err != nil {
			return nil, false, err
		}
		if h.Process != "" {
			files = append(files, f)
		}
	}
	return files, len(files) > 0, nil
}

// readHeader reads a trace's header, its model left undecoded (RunFiles
// needs its process; the merge reads the whole header).
func readHeader(path string) (rawHeader, error) {
	f, err := os.Open(path)
	if err != nil {
		return rawHeader{}, &InputError{File: path, Msg: err.Error()}
	}
	defer f.Close()
	text, err := bufio.NewReaderSize(f, 4096).ReadSlice('\n')
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return rawHeader{}, &InputError{File: path, Line: 1, Msg: err.Error()}
	}
	var h rawHeader
	if err := json.Unmarshal(text, &h); err != nil {
		return h, &InputError{File: path, Line: 1, Msg: "bad header: " + err.Error()}
	}
	return h, nil
}

// merger merges the per-process traces of one run, line by line: it
// holds one line per process and a heap of them, so its memory is in the
// number of processes, not of lines.
type merger struct {
	paths  []string
	procs  []*procTrace
	succ   map[string]*procTrace
	h      heads
	order  causal
	header Header // the merged trace's
	// Cut is the first line in no order of the run, once next has met it.
	Cut *CutLine
	pop *procTrace // the process whose head next returned last
	// With record set (every trace in memory), next records the merged
	// order as it goes, and after a rewind replays it (replay) instead
	// of merging again: the same lines in the same order, without the
	// heap, the stamps' parse and the happens-before check a second time.
	record bool
	rec    []recLine
	replay bool
	ri     int
}

// recLine is a line of the merged order, recorded: its trace, where its
// text is in the trace's data, where its body starts, its line number.
type recLine struct {
	t               *procTrace
	at, end, lineNo int32
	body            int32
}

// newMerger opens the traces of a run and checks their headers.
func newMerger(paths []string) (*merger, error) {
	if len(paths) == 0 {
		return nil, errors.New("no traces to merge")
	}
	m := &merger{paths: paths, succ: map[string]*procTrace{}}
	byName := map[string]*procTrace{}
	var model []byte
	budget := memoryBudget
	for i, path := range paths {
		t, h, err := openProc(path, i, &budget)
		if err != nil {
			m.close()
			return nil, err
		}
		m.procs = append(m.procs, t)
		fail := func(msg string) (*merger, error) {
			m.close()
			return nil, &InputError{File: path, Line: 1, Msg: msg}
		}
		if h.Trace != SchemaVersion {
			return fail(fmt.Sprintf("trace schema version %d: a multi-process run's traces are version %d", h.Trace, SchemaVersion))
		}
		if h.Process == "" {
			return fail("the header names no process: not a trace of one process of a run")
		}
		if i == 0 {
			model = h.Model
			hm, err := decodeModel(h.Model)
			if err != nil {
				return fail("bad header: " + err.Error())
			}
			m.header = Header{Trace: SchemaVersion, Model: hm, Mapping: h.Mapping,
				Source: fmt.Sprintf("%d processes merged (%s)", len(paths), h.Source)}
		} else if same, err := sameModel(h.Model, model); err != nil {
			return fail("bad header: " + err.Error())
		} else if !same {
			return fail(fmt.Sprintf("its model differs from %s's: not one run", paths[0]))
		} else if h.Mapping != m.header.Mapping {
			return fail(fmt.Sprintf("its mapping %q differs from %s's %q: not one run", h.Mapping, paths[0], m.header.Mapping))
		}
		if byName[h.Process] != nil {
			return fail(fmt.Sprintf("a second trace of process %s", h.Process))
		}
		byName[h.Process] = t
	}
	for _, t := range m.procs {
		if t.after == "" {
			continue
		}
		if byName[t.after] == nil {
			m.close()
			return nil, &InputError{File: t.path, Line: 1, Msg: fmt.Sprintf("succeeds %s, whose trace is not in the run", t.after)}
		}
		if o := m.succ[t.after]; o != nil {
			m.close()
			return nil, &InputError{File: t.path, Line: 1, Msg: fmt.Sprintf("%s and %s both succeed %s", o.proc, t.proc, t.after)}
		}
		m.succ[t.after] = t
	}
	// Every process must descend from one that succeeds none: a cycle of
	// successors would leave its traces unread, and the run unchecked.
	for _, t := range m.procs {
		seen := map[string]bool{}
		for u := t; u.after != ""; u = byName[u.after] {
			if seen[u.proc] {
				m.close()
				return nil, &InputError{File: t.path, Line: 1, Msg: fmt.Sprintf("%s is its own predecessor (a cycle of after)", u.proc)}
			}
			seen[u.proc] = true
		}
	}
	for _, t := range m.procs {
		if t.after == "" {
			if err := m.push(t); err != nil {
				m.close()
				return nil, err
			}
		}
	}
	return m, nil
}

// sameModel reports whether two headers' models are one: equal as text
// (the processes of a run write it alike), else equal once decoded (the
// keys of an object in any order).
func sameModel(a, b json.RawMessage) (bool, error) {
	if bytes.Equal(a, b) {
		return true, nil
	}
	x, err := decodeModel(a)
	if err != nil {
		return false, err
	}
	y, err := decodeModel(b)
	if err != nil {
		return false, err
	}
	xb, err := json.Marshal(x)
	if err != nil {
		return false, err
	}
	yb, err := json.Marshal(y)
	return bytes.Equal(xb, yb), err
}

// decodeModel decodes a header's model (none: nil).
func decodeModel(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if len(raw) == 0 {
		return nil, nil
	}
	err := json.Unmarshal(raw, &m)
	return m, err
}

// push puts t's next line on the heap; at the end of t's trace, its
// successor's first.
func (m *merger) push(t *procTrace) error {
	for {
		ok, err := t.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Push(&m.h, t)
			return nil
		}
		// Its trace is exhausted: its successor may start.
		m.order.exhausted(t.proc)
		if t = m.succ[t.proc]; t == nil {
			return nil
		}
	}
}

// next returns the next line of the merged order (valid until the next
// call), where its body starts (after its stamp) and where it comes
// from; false at the end, or at the first line in no order of the run
// (m.Cut).
func (m *merger) next() (text []byte, body int, src SrcLine, ok bool, err error) {
	if m.replay {
		if m.ri >= len(m.rec) {
			return nil, 0, src, false, nil
		}
		r := &m.rec[m.ri]
		m.ri++
		return r.t.data[r.at:r.end], int(r.body), SrcLine{File: r.t.file, Line: int(r.lineNo)}, true, nil
	}
	if m.pop != nil {
		t := m.pop
		m.pop = nil
		if err := m.push(t); err != nil {
			return nil, 0, src, false, err
		}
	}
	if m.h.Len() == 0 || m.Cut != nil {
		return nil, 0, src, false, nil
	}
	t := heap.Pop(&m.h).(*procTrace)
	src = SrcLine{File: t.file, Line: t.lineNo}
	if err := m.order.add(&t.head); err != nil {
		var v *violation
		var l *lostLine
		if !errors.As(err, &v) && !errors.As(err, &l) {
			return nil, 0, src, false, &InputError{File: t.path, Line: t.lineNo, Msg: err.Error()}
		}
		m.Cut = &CutLine{SrcLine: src, Proc: t.proc, Text: string(t.text),
			Reason: "happens-before: " + err.Error(), Lost: l != nil}
		return nil, 0, src, false, nil
	}
	m.pop = t
	if m.record {
		m.rec = append(m.rec, recLine{t: t, at: int32(t.at), end: int32(t.at + len(t.text)), lineNo: int32(t.lineNo), body: int32(t.body)})
	}
	return t.text, t.body, src, true, nil
}

// recordOrder makes next record the merged order for rewind to replay,
// if every trace is in memory (false otherwise: the order is merged again).
func (m *merger) recordOrder() bool {
	for _, t := range m.procs {
		if t.data == nil {
			return false
		}
	}
	m.record = true
	return true
}

// rewind starts the merge again from the traces' first lines.
func (m *merger) rewind() error {
	if m.record {
		// Replay the order recorded: the traces are in memory and
		// unchanged, so merging them again gives the same lines.
		m.record, m.replay, m.ri, m.Cut, m.pop = false, true, 0, nil, nil
		return nil
	}
	m.h, m.order, m.Cut, m.pop = m.h[:0], causal{}, nil, nil
	for _, t := range m.procs {
		if err := t.rewind(); err != nil {
			return err
		}
		if _, _, err := t.readLine(); err != nil { // the header, read before
			return err
		}
	}
	for _, t := range m.procs {
		if t.after == "" {
			if err := m.push(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// close closes the traces.
func (m *merger) close() {
	for _, t := range m.procs {
		t.close()
	}
}

// Merge reads the per-process traces of one run and merges them (in
// memory: for a run too large, CheckRun streams).
func Merge(paths []string) (*Merged, error) {
	mg, err := newMerger(paths)
	if err != nil {
		return nil, err
	}
	defer mg.close()
	m := &Merged{Files: paths}
	for _, t := range mg.procs {
		m.Procs = append(m.Procs, t.proc)
	}
	hb, err := json.Marshal(mg.header)
	if err != nil {
		return nil, err
	}
	m.Data = append(hb, '\n')
	for {
		text, _, src, ok, err := mg.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		m.Data = append(append(m.Data, text...), '\n')
		m.Src = append(m.Src, src)
	}
	m.Cut = mg.Cut
	return m, nil
}

// CheckRun merges the per-process traces of one run and checks the
// merged order against model, or the model the headers name when model
// is nil. It makes two passes (the first decides the environment's losses
// and duplicates from each message's future, the second checks). A long
// run is streamed: the traces are read twice, line by line, holding two
// bits per line, so its memory is linear in the run's length with a
// small constant. A short run (every trace at most 1 MiB, 64 MiB in all)
// is read once into memory, and its second pass replays the first's
// merged order and compiled lines, the same lines in the same order. The
// result names the merged trace's line and, for a line not explained,
// its process and where it is in that process's trace.
func CheckRun(paths []string, name string, model *spec.Model, opts Options) (Result, error) {
	start := time.Now()
	res := Result{File: name}
	mg, err := newMerger(paths)
	if err != nil {
		return res, err
	}
	// A run held in memory: the second pass replays the first's order
	// and takes its compiled lines (kept).
	inMemory := mg.recordOrder()
	hb, err := json.Marshal(mg.header)
	if err != nil {
		mg.close()
		return res, err
	}
	var mapping string
	if model, mapping, err = headerModel(hb, model); err != nil {
		mg.close()
		return res, &InputError{File: paths[0], Line: 1, Msg: err.Error()}
	}
	c, err := NewChecker(model, opts)
	if err != nil {
		mg.close()
		return res, err
	}
	if err := c.setMapping(mapping); err != nil {
		mg.close()
		return res, &InputError{File: paths[0], Line: 1, Msg: err.Error()}
	}
	lc := newLineCompiler(c)
	lc.all = inMemory
	var la fwdLookahead
	var ln line
	var kept []line
	n := 0
	for {
		text, body, src, ok, err := mg.next()
		if err != nil {
			mg.close()
			return res, err
		}
		if !ok {
			break
		}
		if err := lc.compile(text, body, &ln); err != nil {
			mg.close()
			return res, &InputError{File: paths[src.File], Line: src.Line, Msg: err.Error()}
		}
		la.observe(n, &ln)
		if inMemory {
			kept = append(kept, ln)
		}
		n++
	}
	cut := mg.Cut
	defer mg.close()
	if err := mg.rewind(); err != nil {
		return res, err
	}
	for i := 0; i < n; i++ {
		text, body, src, ok, err := mg.next()
		if err != nil || !ok {
			return res, errors.Join(err, fmt.Errorf("%s: the traces changed while they were checked", name))
		}
		if inMemory {
			ln = kept[i]
		} else if err := lc.compile(text, body, &ln); err != nil {
			return res, &InputError{File: paths[src.File], Line: src.Line, Msg: err.Error()}
		}
		la.apply(i, &ln)
		ok, err = c.step(&ln)
		if ok {
			res.Lines++
			continue
		}
		res.Line, res.Text = i+2, string(text)
		res.Process, res.ProcessFile, res.ProcessLine = mg.procs[src.File].proc, paths[src.File], src.Line
		if c.judge(&ln, err, &res) {
			return res, &InputError{File: paths[src.File], Line: src.Line, Err: ErrUnnamedSend,
				Msg: fmt.Sprintf("%s sends a message the line does not name (params.m)", c.actions[ln.act].name)}
		}
		break
	}
	if res.Verdict == "" {
		res.Verdict = OK
		if cut != nil {
			res.Line, res.Text, res.Process, res.Reason = n+2, cut.Text, cut.Proc, cut.Reason
			res.ProcessFile, res.ProcessLine = paths[cut.File], cut.Line
			res.Verdict = Rejected
			if cut.Lost {
				res.Verdict = Incomplete
			}
		}
	}
	res.MaxCandidates = c.MaxCandidates()
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// lineCompiler compiles the lines of a stream: a line whose body (the
// text after its stamp) was seen before is a copy of its compiled form;
// the observed values of the lines it remembers stay in the checker's
// arena, those of the others are dropped at the next line.
type lineCompiler struct {
	c     *Checker
	cache map[string]line
	keep  int // the arena's length that remembered lines use
	hits  int
	seen  int
	// all: every line's observed values stay in the arena (a run held
	// in memory keeps its compiled lines for the second pass).
	all bool
}

func newLineCompiler(c *Checker) *lineCompiler {
	c.arena = c.arena[:0]
	return &lineCompiler{c: c, cache: map[string]line{}}
}

// compile compiles text, whose body starts at body, into ln. The first
// line of a successor (its stamp names after) is compiled afresh and not
// remembered: the refinement mapping reads it differently from a line of
// the same body elsewhere (refine.go).
func (lc *lineCompiler) compile(text []byte, body int, ln *line) error {
	lc.seen++
	if bytes.Contains(text[:body], afterKey) {
		lc.c.arena = lc.c.arena[:lc.keep]
		err := lc.c.parseLine(text, body, true, ln)
		if lc.all {
			lc.keep = len(lc.c.arena)
		}
		return err
	}
	if l, ok := lc.cache[string(text[body:])]; ok {
		*ln = l
		lc.hits++
		return nil
	}
	lc.c.arena = lc.c.arena[:lc.keep]
	if err := lc.c.parseLine(text, body, false, ln); err != nil {
		return err
	}
	switch {
	case lc.cache == nil:
	case len(lc.cache) < lineCacheSize:
		lc.cache[string(text[body:])] = *ln
		lc.keep = len(lc.c.arena)
	case lc.hits < lc.seen/2:
		lc.cache = nil // most lines are new: the cache does not pay
	}
	if lc.all {
		lc.keep = len(lc.c.arena)
	}
	return nil
}

// afterKey is the stamp's key of a successor's first line.
var afterKey = []byte(`"after":`)

// fwdLookahead is lookahead in two forward passes: observe, line by line,
// marks each send whose message's next event is a receive (received) and
// each receive whose message's next event is a receive again (again);
// apply then sets, line by line, what lookahead sets in one backward
// pass: a send lost at once, a receive keeping a copy, the messages in
// flight awaiting a later receive.
type fwdLookahead struct {
	received, again bitset
	last            map[msgKey]event // a message's last event so far
	// the second pass
	pending map[msgKey]bool
	count   int
}

// event is a message's (or a REGISTER's) event: a line that sends or
// receives it.
type event struct {
	line int
	send bool
}

func (la *fwdLookahead) observe(i int, ln *line) {
	if la.last == nil {
		la.last = map[msgKey]event{}
	}
	ev := func(k msgKey, send bool) {
		if prev, ok := la.last[k]; ok && !send {
			if prev.send {
				la.received.set(prev.line)
			} else {
				la.again.set(prev.line)
			}
		}
		la.last[k] = event{line: i, send: send}
	}
	if ln.isSendReg || ln.isRecvReg {
		ev(regKey(int(ln.idx), int(ln.b)), ln.isSendReg)
		return
	}
	if ln.isRecv { // in a line that receives and replies, the receive comes first
		ev(keyOf(ln.msg.msg), false)
	}
	if ln.hasReply || (ln.hasMsg && !ln.isRecv) {
		ev(keyOf(ln.sentMsg()), true)
	}
}

// apply sets line i's lose, keep and peak (lookahead's) from the first
// pass.
func (la *fwdLookahead) apply(i int, ln *line) {
	if la.pending == nil {
		la.pending = map[msgKey]bool{}
	}
	set := func(k msgKey, v bool) {
		switch old := la.pending[k]; {
		case v && !old:
			la.count++
		case !v && old:
			la.count--
		}
		la.pending[k] = v
	}
	if ln.isSendReg {
		ln.lose = !la.received.get(i)
	}
	if ln.isSendReg || ln.isRecvReg {
		ln.peak = int32(la.count)
		return
	}
	if ln.isRecv {
		if ln.keep < 0 {
			ln.keep = b8(la.again.get(i))
		}
		set(keyOf(ln.msg.msg), la.again.get(i))
	}
	sends := ln.hasReply || (ln.hasMsg && !ln.isRecv)
	if sends {
		ln.lose = !la.received.get(i)
		set(keyOf(ln.sentMsg()), !ln.lose)
	}
	ln.peak = int32(la.count)
	if sends && ln.lose {
		ln.peak++
	}
}

// bitset is a growing set of line numbers.
type bitset []uint64

func (b *bitset) set(i int) {
	for i>>6 >= len(*b) {
		*b = append(*b, 0)
	}
	(*b)[i>>6] |= 1 << (i & 63)
}

func (b bitset) get(i int) bool { return i>>6 < len(b) && b[i>>6]&(1<<(i&63)) != 0 }
