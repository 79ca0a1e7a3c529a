package tracecheck

import (
	"bytes"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
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

// procTrace is one process's trace being merged.
type procTrace struct {
	file   int
	proc   string
	after  string
	data   []byte
	off    int // the next line's offset
	lineNo int // the next line's number
	head   stamp
	text   []byte
	start  int // the head's line number
	queued bool
}

// next reads the process's next non-empty line into its head; false at
// the end of its trace.
func (t *procTrace) next(path string) (bool, error) {
	for t.off < len(t.data) {
		text, rest := nextLine(t.data[t.off:])
		t.off = len(t.data) - len(rest)
		t.lineNo++
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		if _, err := splitStamp(text, &t.head); err != nil {
			return false, &InputError{File: path, Line: t.lineNo, Msg: err.Error()}
		}
		if t.head.proc != t.proc {
			return false, &InputError{File: path, Line: t.lineNo,
				Msg: fmt.Sprintf("a line of process %q in the trace of %s (every line names its process: p)", t.head.proc, t.proc)}
		}
		t.text, t.start = text, t.lineNo
		return true, nil
	}
	return false, nil
}

// heads is the merge's heap of the processes' next lines.
type heads []*procTrace

func (h heads) Len() int { return len(h) }
func (h heads) Less(i, j int) bool {
	if h[i].head.clock != h[j].head.clock {
		return h[i].head.clock < h[j].head.clock
	}
	return h[i].proc < h[j].proc
}
func (h heads) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *heads) Push(x any)   { *h = append(*h, x.(*procTrace)) }
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

func readHeader(path string) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, &InputError{File: path, Msg: err.Error()}
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	n, _ := f.Read(buf)
	text, _ := nextLine(buf[:n])
	var h Header
	if err := json.Unmarshal(text, &h); err != nil {
		return h, &InputError{File: path, Line: 1, Msg: "bad header: " + err.Error()}
	}
	return h, nil
}

// Merge reads the per-process traces of one run and merges them.
func Merge(paths []string) (*Merged, error) {
	if len(paths) == 0 {
		return nil, errors.New("no traces to merge")
	}
	m := &Merged{Files: paths}
	procs := make([]*procTrace, len(paths))
	byName := map[string]*procTrace{}
	var model []byte
	var first Header
	for i, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, &InputError{File: path, Msg: err.Error()}
		}
		text, rest := nextLine(data)
		var h Header
		dec := json.NewDecoder(bytes.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&h); err != nil {
			return nil, &InputError{File: path, Line: 1, Msg: "bad header: " + err.Error()}
		}
		if h.Trace != SchemaVersion {
			return nil, &InputError{File: path, Line: 1, Msg: fmt.Sprintf("trace schema version %d: a multi-process run's traces are version %d", h.Trace, SchemaVersion)}
		}
		if h.Process == "" {
			return nil, &InputError{File: path, Line: 1, Msg: "the header names no process: not a trace of one process of a run"}
		}
		mb, err := json.Marshal(h.Model)
		if err != nil {
			return nil, &InputError{File: path, Line: 1, Msg: err.Error()}
		}
		if i == 0 {
			model, first = mb, h
		} else if !bytes.Equal(mb, model) {
			return nil, &InputError{File: path, Line: 1, Msg: fmt.Sprintf("its model differs from %s's: not one run", paths[0])}
		}
		if byName[h.Process] != nil {
			return nil, &InputError{File: path, Line: 1, Msg: fmt.Sprintf("a second trace of process %s", h.Process)}
		}
		t := &procTrace{file: i, proc: h.Process, after: h.After, data: data, off: len(data) - len(rest), lineNo: 1}
		procs[i], byName[h.Process] = t, t
		m.Procs = append(m.Procs, h.Process)
	}
	succ := map[string]*procTrace{}
	for _, t := range procs {
		if t.after == "" {
			continue
		}
		if byName[t.after] == nil {
			return nil, &InputError{File: paths[t.file], Line: 1, Msg: fmt.Sprintf("succeeds %s, whose trace is not in the run", t.after)}
		}
		if o := succ[t.after]; o != nil {
			return nil, &InputError{File: paths[t.file], Line: 1, Msg: fmt.Sprintf("%s and %s both succeed %s", o.proc, t.proc, t.after)}
		}
		succ[t.after] = t
	}
	hb, err := json.Marshal(Header{Trace: SchemaVersion, Model: first.Model,
		Source: fmt.Sprintf("%d processes merged (%s)", len(paths), first.Source)})
	if err != nil {
		return nil, err
	}
	m.Data = append(hb, '\n')
	var h heads
	var order causal
	var push func(t *procTrace) error
	push = func(t *procTrace) error {
		for {
			ok, err := t.next(paths[t.file])
			if err != nil {
				return err
			}
			if ok {
				heap.Push(&h, t)
				return nil
			}
			// Its trace is exhausted: its successor may start.
			order.exhausted(t.proc)
			if t = succ[t.proc]; t == nil {
				return nil
			}
		}
	}
	for _, t := range procs {
		if t.after == "" {
			if err := push(t); err != nil {
				return nil, err
			}
		}
	}
	for h.Len() > 0 {
		t := heap.Pop(&h).(*procTrace)
		if err := order.add(&t.head); err != nil {
			var v *violation
			var l *lostLine
			if !errors.As(err, &v) && !errors.As(err, &l) {
				return nil, &InputError{File: paths[t.file], Line: t.start, Msg: err.Error()}
			}
			m.Cut = &CutLine{SrcLine: SrcLine{File: t.file, Line: t.start}, Proc: t.proc, Text: string(t.text),
				Reason: "happens-before: " + err.Error(), Lost: l != nil}
			break
		}
		m.Data = append(append(m.Data, t.text...), '\n')
		m.Src = append(m.Src, SrcLine{File: t.file, Line: t.start})
		if err := push(t); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// CheckRun merges the per-process traces of one run (Merge) and checks
// the merged trace against model, or the model the headers name when
// model is nil. The result names the merged trace's line and, for a line
// not explained, its process and where it is in that process's trace.
func CheckRun(paths []string, name string, model *spec.Model, opts Options) (Result, error) {
	start := time.Now()
	m, err := Merge(paths)
	if err != nil {
		return Result{File: name}, err
	}
	res, err := CheckBytes(m.Data, name, model, opts)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) && ie.Line >= 2 && ie.Line-2 < len(m.Src) {
			src := m.Src[ie.Line-2]
			return res, &InputError{File: m.Files[src.File], Line: src.Line, Msg: ie.Msg}
		}
		return res, err
	}
	if res.Verdict == OK && m.Cut != nil {
		res.Line, res.Text, res.Process, res.Reason = len(m.Src)+2, m.Cut.Text, m.Cut.Proc, m.Cut.Reason
		res.ProcessFile, res.ProcessLine = m.Files[m.Cut.File], m.Cut.Line
		res.Verdict = Rejected
		if m.Cut.Lost {
			res.Verdict = Incomplete
		}
	} else if res.Verdict != OK && res.Line >= 2 && res.Line-2 < len(m.Src) {
		src := m.Src[res.Line-2]
		res.ProcessFile, res.ProcessLine = m.Files[src.File], src.Line
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}
