package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/drainproof/drainproof/impl/node"
	"github.com/drainproof/drainproof/impl/trace"
)

// This file gives each process of a run its own trace
// (ClusterConfig.Traces; docs/trace.md, multi-process runs): the
// coordinator, the LogCoordinator and each of T's processes write their
// own lines with their own Lamport clock, as the processes of a real
// cluster do, and the checker merges them. What one lock ordered in the
// single trace is carried here by the clocks alone:
//
//   - a message carries the stamp of the line that sent it (Msg.Clock),
//     and the receiver's line depends on it (Writer.Receive before the
//     component takes the message);
//   - a step that reads another process's state without a message in the
//     model is an atomic read, so both its edges are written: the
//     LogCoordinator's answer depends on the coordinator's last line (its
//     query) and the coordinator's next line on the answer; the
//     coordinator's CoordLearnVersion depends on the start of T's process
//     whose version it reads, and T's next line on it;
//   - the upgrade controller's restart depends on the coordinator's
//     decision (its last line when DrainNode answered);
//   - a process of T succeeds the previous one (Header.After): the
//     restart line is its first, with a clock past its predecessor's.
//
// The run is sequential, so every edge joins a line to one that was
// written before it: the clocks are those a real cluster would have,
// minus its concurrency.

// Process names of a multi-process run.
const (
	// CoordProcess is the coordinator's process.
	CoordProcess = "coord"
	// LogCoordProcess is the LogCoordinator's process.
	LogCoordProcess = "logcoord"
)

// TProcess is the name of T's process of epoch e: T.1, T.2, …
func TProcess(e uint64) string { return fmt.Sprintf("T.%d", e) }

// procTraces are the per-process traces of one run.
type procTraces struct {
	open      func(proc, after string, clock uint64) (*trace.Writer, error)
	coord, lc *trace.Writer
	// tFirst is the stamp of the first line of T's current process (its
	// restart line; zero for T.1, which starts with the model's Init).
	tFirst trace.Stamp
	// prev is T's previous process: its name, its last clock, and the
	// dependencies it had been given that no line of it took.
	prev      string
	prevClock uint64
	carry     []trace.Stamp
	// tails picks how much of a killed process's unsent tail survives
	// (its own generator: the run's choices stay those of an untraced run).
	tails *rand.Rand
	// Lost counts the lines killed processes lost.
	lost int
	err  error
}

func newProcTraces(open func(proc, after string, clock uint64) (*trace.Writer, error)) (*procTraces, error) {
	if open == nil {
		return nil, nil
	}
	pt := &procTraces{open: open, tails: rand.New(rand.NewPCG(1, 2))}
	var err error
	if pt.coord, err = open(CoordProcess, "", 0); err != nil {
		return nil, err
	}
	if pt.lc, err = open(LogCoordProcess, "", 0); err != nil {
		return nil, errors.Join(err, pt.coord.Close())
	}
	return pt, nil
}

// startT opens the trace of T's process of epoch e.
func (pt *procTraces) startT(e uint64) (*trace.Writer, error) {
	pt.tFirst = trace.Stamp{}
	tw, err := pt.open(TProcess(e), pt.prev, pt.prevClock)
	pt.prev = TProcess(e)
	return tw, err
}

// endT ends the trace of T's process tw: a kill loses some of its unsent
// tail.
func (pt *procTraces) endT(tw *trace.Writer, killed bool) {
	pt.carry = append(pt.carry[:0], tw.Pending()...)
	pt.prevClock = tw.Clock()
	var err error
	if killed {
		var lost int
		lost, err = tw.Crash(pt.tails.IntN(tw.Unwritten() + 1))
		pt.lost += lost
	} else {
		err = tw.Close()
	}
	if pt.err == nil {
		pt.err = err
	}
}

// close closes the coordinator's and the LogCoordinator's traces and
// returns the first error of any trace.
func (pt *procTraces) close() error {
	if pt == nil {
		return nil
	}
	return errors.Join(pt.err, pt.coord.Close(), pt.lc.Close())
}

// last returns the stamp of w's last line (zero when untraced).
func last(w *trace.Writer) trace.Stamp {
	if w == nil {
		return trace.Stamp{}
	}
	return w.Last()
}

// receive makes w's next line depend on st (nothing when untraced).
func receive(w *trace.Writer, st trace.Stamp) {
	if w != nil {
		w.Receive(st)
	}
}

// Lost returns the number of trace lines T's killed processes lost.
func (c *Cluster) Lost() int {
	if c.procs == nil {
		return 0
	}
	return c.procs.lost
}

// writers return the traces of the coordinator, the LogCoordinator and
// T's current process (nil when the run is not traced per process).
func (c *Cluster) coordW() *trace.Writer {
	if c.procs == nil {
		return nil
	}
	return c.procs.coord
}

func (c *Cluster) lcW() *trace.Writer {
	if c.procs == nil {
		return nil
	}
	return c.procs.lc
}

func (c *Cluster) tW() *trace.Writer { return c.proc.tw }

// observeVersion is the membership announcing the version of T's current
// process to the coordinator (CoordLearnVersion, an atomic read of T's
// epoch and version: it depends on the start of T's process, and T's
// next line on it).
func (c *Cluster) observeVersion(v node.Version) {
	cw := c.coordW()
	if c.procs != nil {
		receive(cw, c.procs.tFirst)
	}
	before := last(cw)
	c.Coord.ObserveVersion(Target, c.Epoch(), v)
	if after := last(cw); after != before {
		receive(c.tW(), after)
	}
}

// restartFrom returns the dependencies of the restart line of T's new
// process: the coordinator's decision (an upgrade restart) and what the
// killed process had been given but not taken.
func (c *Cluster) restartFrom(upgrade bool) []trace.Stamp {
	if c.procs == nil {
		return nil
	}
	from := append([]trace.Stamp(nil), c.procs.carry...)
	if upgrade {
		if st := last(c.procs.coord); st.Proc != "" {
			from = append(from, st)
		}
	}
	return from
}

// addTarget is T's current process rejoining the coordinator's membership
// after a restart (CoordRejoin): the coordinator reads the new process's
// epoch, an atomic read like CoordLearnVersion's, so the line depends on
// the start of T's process, and T's next line on it.
func (c *Cluster) addTarget() {
	cw := c.coordW()
	if c.procs != nil {
		receive(cw, c.procs.tFirst)
	}
	before := last(cw)
	c.Coord.AddNode(Target, c.Epoch(), c.now)
	if after := last(cw); after != before {
		receive(c.tW(), after)
	}
}
