package modelcheck_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// tagged is a state of 272 bytes that is not raw (a string field), so
// the queue of a search cannot move it to disk.
type tagged struct {
	N, Level uint64
	Room     [30]uint64
	Tag      string
}

// taggedHubLeaves is hubLeaves with tagged states: one initial state, hubs
// successors of it, and leaves successors of each hub.
type taggedHubLeaves struct{ hubs, leaves int }

func (m *taggedHubLeaves) Init(emit func(tagged)) { emit(tagged{Tag: "init"}) }

func (m *taggedHubLeaves) Next(s tagged, emit func(string, tagged)) {
	switch s.Level {
	case 0:
		for h := range m.hubs {
			emit("Hub", tagged{N: uint64(h), Level: 1, Tag: "hub"})
		}
	case 1:
		for l := range m.leaves {
			emit("Leaf", tagged{N: s.N*uint64(m.leaves) + uint64(l), Level: 2, Tag: "leaf"})
		}
	}
}

func (m *taggedHubLeaves) Encode(dst []byte, s tagged) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(dst, s.N), s.Level)
}

func (m *taggedHubLeaves) Invariants() []string { return nil }

func (m *taggedHubLeaves) Holds(int, tagged) bool { return true }

// The seen-set moves to disk at a level's end when it and the queue
// together pass half the memory budget: the queue's states count with
// their size (here 16,384 leaves and a pooled block of 4,096 entries of
// 280 bytes, 5.7 MB, which cannot go to disk), though the set alone is
// far below half of 10 MB. The spilled search gives the figures of one in
// memory.
func TestSetMovesToDiskWhenTheQueueFillsHalfTheBudget(t *testing.T) {
	m := &taggedHubLeaves{hubs: 256, leaves: 64}
	inMemory, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, inMemory.Outcome, inMemory.Reason)
	require.EqualValues(t, 1+256+256*64, inMemory.Distinct)
	const budget = 10 << 20
	require.Less(t, inMemory.SetBytes, int64(budget/8), "the set alone is far below half the budget")

	res, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1, MemoryBudget: budget, SpillDir: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
	require.Equal(t, 1, res.Spills, "the set moved to disk once, after the level of leaves")
	require.Zero(t, res.QueueSpillBytes, "the queue of tagged states stays in memory")
	require.Equal(t, inMemory.Distinct, res.Distinct)
	require.Equal(t, inMemory.Generated, res.Generated)
	require.Equal(t, inMemory.Depth, res.Depth)
}

// A level's new states count against the queue's share of the budget as
// they are found, not at the level's end, also when every state of the
// level has a batch's worth of successors or more (here 128 hubs of 128
// leaves each, 4.3 MB of states against a share of 2 MB): the queue
// moves to disk during the level, and the figures are those of a search
// in memory.
func TestQueueMovesToDiskDuringALevelOfManySuccessorsAState(t *testing.T) {
	m := &hubLeaves{hubs: 128, leaves: 128}
	inMemory, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1})
	require.NoError(t, err)
	require.EqualValues(t, 1+128+128*128, inMemory.Distinct)

	res, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 1, MemoryBudget: 8 << 20, SpillDir: t.TempDir()})
	require.NoError(t, err)
	require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
	require.Positive(t, res.QueueSpillBytes, "the level of leaves moved to disk as it grew")
	require.Equal(t, inMemory.Distinct, res.Distinct)
	require.Equal(t, inMemory.Generated, res.Generated)
	require.Equal(t, inMemory.Depth, res.Depth)
}

// A checkpoint whose reference names a worker past those it lists (here
// worker 3 of three, which the two bits of a worker's number can hold) is
// refused as a damaged checkpoint, as any reference outside the logs is.
func TestCheckpointReferenceToAWorkerPastTheLogsIsRefused(t *testing.T) {
	dir := t.TempDir()
	m := &hubLeaves{hubs: 4, leaves: 4}
	_, err := modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 3, CheckpointDir: dir, CheckpointEvery: time.Nanosecond})
	require.NoError(t, err)
	path := filepath.Join(dir, "checkpoint.bin")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	// The file ends with the frontier: each state's 4-byte reference and
	// then its 256 bytes (a raw state).
	last := len(b) - 256 - 4
	binary.LittleEndian.PutUint32(b[last:], 3) // worker 3, its state 0
	require.NoError(t, os.WriteFile(path, b, 0o644))
	_, err = modelcheck.Check(context.Background(), m, modelcheck.Options{Workers: 3, Recover: dir})
	require.ErrorIs(t, err, modelcheck.ErrCheckpoint)
	require.ErrorContains(t, err, "a reference points outside the logs")
}

// The text report marks the step where a lasso's loop starts, and only
// that one; with no loop (loopStart -1) nothing is marked.
func TestWriteTraceMarksTheLoopStart(t *testing.T) {
	trace := []modelcheck.Step[point]{
		{Action: "Init", Label: "Init", State: point{}},
		{Action: "IncX", Label: "IncX", State: point{1, 0}},
		{Action: "IncY", Label: "IncY", State: point{1, 1}},
	}
	var b bytes.Buffer
	require.NoError(t, modelcheck.WriteTrace(&b, &grid{size: 2}, trace, 1))
	var marked []string
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.Contains(line, "<- loop starts here") {
			marked = append(marked, line)
		}
	}
	require.Equal(t, []string{"  2  IncX   <- loop starts here"}, marked)

	b.Reset()
	require.NoError(t, modelcheck.WriteTrace(&b, &grid{size: 2}, trace, -1))
	require.NotContains(t, b.String(), "loop starts here")
}

// A trace of no steps gives a page of no rows, not a failure.
func TestWriteTraceHTMLOfNoStepsWritesAPage(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, modelcheck.WriteTraceHTMLWith(&b, &grid{size: 2}, nil, modelcheck.HTMLTrace{Title: "empty", LoopStart: -1}))
	require.Contains(t, b.String(), "empty")
}

// Coverage looks at its context before it expands the first state: a
// search of one state under a cancelled context fails with the context's
// error.
func TestCoverageOfOneStateUnderACancelledContextFails(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := modelcheck.Coverage(ctx, &grid{size: 1}, 0)
	require.ErrorIs(t, err, context.Canceled)
}

// SortCoverage is stable: entries of one action (two reports put
// together) keep the order they came in, as do actions missing from the
// order.
func TestSortCoverageKeepsTheOrderOfEntriesOfOneAction(t *testing.T) {
	cov := []modelcheck.ActionCoverage{
		{Action: "B", Generated: 1},
		{Action: "A", Generated: 2},
		{Action: "B", Generated: 3},
		{Action: "A", Generated: 4},
	}
	got := modelcheck.SortCoverage(cov, []string{"A", "B"})
	require.Equal(t, []modelcheck.ActionCoverage{
		{Action: "A", Generated: 2},
		{Action: "A", Generated: 4},
		{Action: "B", Generated: 1},
		{Action: "B", Generated: 3},
	}, got)
}
