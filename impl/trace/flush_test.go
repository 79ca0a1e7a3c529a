package trace_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/impl/trace"
	"github.com/drainproof/drainproof/tla/names"
)

// writeThroughAt is the documented size of a Writer's buffer: once the
// lines it holds reach 64 KiB it writes them out.
const writeThroughAt = 1 << 16

// padded returns a line of action BrokerAdmit whose dispatcher parameter
// is n bytes long (n > 0: an empty parameter is left out).
func padded(n int) *trace.Line {
	return &trace.Line{Action: names.BrokerAdmit, D: strings.Repeat("d", n)}
}

// TestWriterHoldsLinesUntil64KiB: a Writer of one trace writes its lines
// out when the lines it holds reach 64 KiB, not before (or at Close): 255
// lines of 256 bytes stay in memory, the 256th takes them to exactly
// 64 KiB and all of them reach the underlying writer.
func TestWriterHoldsLinesUntil64KiB(t *testing.T) {
	const size = 256 // a line and its newline
	pad := size - 1 - len(trace.AppendLine(nil, padded(1))) + 1
	require.Len(t, trace.AppendLine(nil, padded(pad)), size-1)
	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, trace.Header{Model: map[string]any{}})
	require.NoError(t, err)
	header := buf.Len()
	for range writeThroughAt/size - 1 {
		w.Trace(padded(pad))
	}
	require.Equal(t, header, buf.Len(), "below 64 KiB the lines stay in memory")
	w.Trace(padded(pad))
	require.Equal(t, header+writeThroughAt, buf.Len(), "at 64 KiB they are written out")
	require.NoError(t, w.Close())
	require.Equal(t, header+writeThroughAt, buf.Len())
}

// TestProcessWriterWritesThroughAt64KiB: a process Writer, whose lines
// that send nothing wait in memory for a crash to lose, holds at most
// 64 KiB of them: the line that takes them to exactly 64 KiB writes them
// through, and none is left for a crash to lose.
func TestProcessWriterWritesThroughAt64KiB(t *testing.T) {
	const size = 256 // a line and its newline
	// From clock 1000 to 9999 a stamp has four digits: every line of the
	// same parameters has the same length. A probe measures it.
	h := trace.Header{Model: map[string]any{}, Process: "T.1", Clock: 999}
	var probe bytes.Buffer
	pw, err := trace.NewWriter(&probe, h)
	require.NoError(t, err)
	pw.Trace(padded(1))
	pw.Trace(padded(1))
	require.NoError(t, pw.Close())
	lines := strings.Split(strings.TrimSuffix(probe.String(), "\n"), "\n")
	require.Len(t, lines, 3)
	pad := size - 1 - len(lines[2]) + 1

	var buf bytes.Buffer
	w, err := trace.NewWriter(&buf, h)
	require.NoError(t, err)
	w.Trace(padded(pad)) // the first line is written through
	require.Zero(t, w.Unwritten())
	written := buf.Len()
	for range writeThroughAt/size - 1 {
		w.Trace(padded(pad))
	}
	require.Equal(t, writeThroughAt/size-1, w.Unwritten(), "below 64 KiB the lines stay in memory")
	require.Equal(t, written, buf.Len())
	w.Trace(padded(pad))
	require.Zero(t, w.Unwritten(), "at 64 KiB they are written through")
	require.Equal(t, written+writeThroughAt, buf.Len())
	lost, err := w.Crash(0)
	require.NoError(t, err)
	require.Zero(t, lost)
}

// writeCounter is a destination that counts the writes reaching it.
type writeCounter struct{ writes int }

func (c *writeCounter) Write(p []byte) (int, error) { c.writes++; return len(p), nil }

// TestWriterWritesOnlyWhenLinesWait: a Writer calls its destination's
// Write only with lines to write: a Stamp (which a transport takes for
// every message it sends) or a Close with no line waiting makes no
// write, empty or not.
func TestWriterWritesOnlyWhenLinesWait(t *testing.T) {
	var dst writeCounter
	w, err := trace.NewWriter(&dst, trace.Header{Model: map[string]any{}, Process: "coord"})
	require.NoError(t, err)
	require.Equal(t, 1, dst.writes, "the header")
	w.Trace(&trace.Line{Action: names.CoordLearnVersion}) // the first line is written through
	require.Equal(t, 2, dst.writes)
	require.Equal(t, trace.Stamp{Proc: "coord", Clock: 1}, w.Stamp())
	require.Equal(t, 2, dst.writes, "a Stamp with no line waiting writes nothing")
	require.NoError(t, w.Close())
	require.Equal(t, 2, dst.writes, "nor does a Close")

	dst = writeCounter{}
	w, err = trace.NewWriter(&dst, trace.Header{Model: map[string]any{}})
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.Equal(t, 1, dst.writes, "a trace of no line is its header alone")
}
