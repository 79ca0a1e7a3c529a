package modelcheck_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// subsets is a model with wide levels: the subsets of n elements, from
// the empty one, adding one element a step. Level k holds the C(n, k-1)
// subsets of k-1 elements, so the middle level is far wider than the
// rest; 2^n distinct states, n·2^(n-1)+1 generated, depth n+1.
type subsets struct {
	n   int
	bad uint32 // the invariant "Safe" fails at this subset (0: never)
	// stop, if set, is called at every expansion (a test cancels there).
	stop func()
}

func (m *subsets) Init(emit func(uint32)) { emit(0) }

func (m *subsets) Next(s uint32, emit func(string, uint32)) {
	if m.stop != nil {
		m.stop()
	}
	for i := 0; i < m.n; i++ {
		if s&(1<<i) == 0 {
			emit("Add"+strconv.Itoa(i), s|1<<i)
		}
	}
}

func (m *subsets) Encode(dst []byte, s uint32) []byte {
	return binary.LittleEndian.AppendUint32(dst, s)
}

func (m *subsets) Invariants() []string { return []string{"Safe"} }

func (m *subsets) Holds(_ int, s uint32) bool { return m.bad == 0 || s != m.bad }

func (m *subsets) Vars(s uint32) [][2]string { return [][2]string{{"s", strconv.Itoa(int(s))}} }

// subsetsSize is the size of the subsets model the queue tests check,
// and a memory budget that spills its middle levels: 2^18 states and
// 512 KiB (the widest level, 48,620 states, holds 380 KiB of queue);
// under the race detector, which slows the search tenfold, 2^17 states
// and 256 KiB (24,310 states, 190 KiB). A level on disk is read back
// four blocks (of 32 KiB here) at a time, and each worker keeps the
// block it fills: the budget must leave room for those.
func subsetsSize() (n int, budget int64) {
	if raceEnabled {
		return 17, 256 << 10
	}
	return 18, 512 << 10
}

// midLevel returns how many states come before the widest level of the
// subsets of n elements (level n/2+1, the subsets of n/2 elements), and
// that level's width.
func midLevel(n int) (before, width int) {
	c := 1 // C(n, k)
	for k := 0; k < n/2; k++ {
		before += c
		c = c * (n - k) / (k + 1)
	}
	return before, c
}

func checkSubsets(t *testing.T, m *subsets, opts modelcheck.Options) *modelcheck.Result[uint32] {
	t.Helper()
	res, err := modelcheck.Check(context.Background(), m, opts)
	require.NoError(t, err)
	return res
}

// A search whose queue passes its share of the memory budget moves the
// next level's blocks to disk and reads them back in order: the figures
// are the closed-form ones, the queue held less memory than in a run
// without a budget, and with one worker the counterexample and the
// figures at the violation are those of the run in memory. Every file is
// removed at the end.
func TestQueueSpillGivesTheFiguresInMemory(t *testing.T) {
	// The size the other tests use without the race detector: under it,
	// the floor (four blocks read back and two per worker) is too near
	// a budget that the smaller model's queue passes in memory.
	const n, budget = 18, 512 << 10
	bad := uint32(0b101010101010101010)
	workerSets := []int{1, 2, 3}
	if raceEnabled {
		workerSets = []int{2}
	}
	for _, workers := range workerSets {
		dir := t.TempDir()
		opts := modelcheck.Options{Workers: workers, MemoryBudget: budget, SpillDir: dir}
		res := checkSubsets(t, &subsets{n: n}, opts)
		require.Equal(t, modelcheck.OK, res.Outcome, res.Reason)
		require.EqualValues(t, 1<<n, res.Distinct)
		require.EqualValues(t, n<<(n-1)+1, res.Generated)
		require.Equal(t, n+1, res.Depth)
		require.Positive(t, res.QueueSpillBytes, "the queue moved to disk")
		require.Positive(t, res.QueueDiskPeak)
		require.Less(t, res.QueueDiskPeak, res.QueueSpillBytes, "a file is removed once read back")
		require.Positive(t, res.Spills, "the set moved to disk")

		// The queue's high-water mark: under the budget here, above it in
		// memory.
		inMemory := checkSubsets(t, &subsets{n: n}, modelcheck.Options{Workers: workers, MemoryBudget: 1 << 40})
		require.Zero(t, inMemory.QueueSpillBytes)
		require.Positive(t, res.QueuePeak)
		require.Less(t, res.QueuePeak, int64(budget), "the queue in memory")
		require.Greater(t, inMemory.QueuePeak, int64(budget), "the queue the model needs in memory")
		left, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, left, "the spill's files are removed")
		if raceEnabled {
			continue // the violation's path is the same, and slow under the detector
		}

		m := &subsets{n: n, bad: bad}
		want := checkSubsets(t, m, modelcheck.Options{Workers: workers})
		got := checkSubsets(t, m, opts)
		require.Equal(t, modelcheck.Violated, got.Outcome)
		require.Positive(t, got.QueueSpillBytes)
		require.Len(t, got.Trace, bits.OnesCount32(bad)+1)
		require.Len(t, want.Trace, len(got.Trace))
		if workers == 1 {
			require.Equal(t, want.Distinct, got.Distinct)
			require.Equal(t, want.Generated, got.Generated)
			require.Equal(t, want.Depth, got.Depth)
			require.Equal(t, want.Trace, got.Trace)
		}
	}
}

// A checkpoint written while a level lies on disk holds its states (read
// back without giving them up), and a run resumed from it, which spills
// its frontier again as it loads, ends with the figures of an
// uninterrupted run.
func TestCheckpointOfASpilledQueue(t *testing.T) {
	n, budget := subsetsSize()
	ck := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	// Cancelled half-way through the widest level, whose states pass
	// the queue's share of the budget.
	before, width := midLevel(n)
	m := &subsets{n: n, stop: func() {
		if calls.Add(1) == int64(before+width/2) {
			cancel()
		}
	}}
	opts := modelcheck.Options{Workers: 1, MemoryBudget: budget, SpillDir: t.TempDir(), CheckpointDir: ck, CheckpointEvery: time.Nanosecond}
	first, err := modelcheck.Check(ctx, m, opts)
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, first.Outcome)
	require.Positive(t, first.QueueSpillBytes)
	workerSets := []int{1, 2}
	if raceEnabled {
		workerSets = workerSets[1:]
	}
	for _, workers := range workerSets {
		again := checkSubsets(t, &subsets{n: n}, modelcheck.Options{Workers: workers, MemoryBudget: budget, SpillDir: t.TempDir(), Recover: ck})
		require.Equal(t, n/2+1, again.ResumedAt)
		require.Equal(t, modelcheck.OK, again.Outcome, again.Reason)
		require.Positive(t, again.QueueSpillBytes, "the frontier spilled as it loaded")
		require.EqualValues(t, 1<<n, again.Distinct)
		require.EqualValues(t, n<<(n-1)+1, again.Generated)
		require.Equal(t, n+1, again.Depth)
	}
}

// Cancelling a run whose queue is on disk removes the queue's files.
func TestCancelRemovesTheSpilledQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	n, budget := subsetsSize()
	before, width := midLevel(n)
	m := &subsets{n: n, stop: func() {
		if calls.Add(1) == int64(before+width) { // past the widest level
			cancel()
		}
	}}
	dir := t.TempDir()
	res, err := modelcheck.Check(ctx, m, modelcheck.Options{Workers: 2, MemoryBudget: budget, SpillDir: dir})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "cancelled")
	require.Positive(t, res.QueueSpillBytes)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left, "the spill's files are removed")
}

// modelFigures are the figures tla/models.json records for a model.
type modelFigures struct {
	Distinct, Generated int64
	Depth               int
	TraceLength         int `json:"trace_length"`
}

func recorded(t *testing.T, cfg string) modelFigures {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "tla", "models.json"))
	require.NoError(t, err)
	var all struct {
		Models []struct {
			Config string
			Go     modelFigures
		}
	}
	require.NoError(t, json.Unmarshal(b, &all))
	for _, m := range all.Models {
		if m.Config == cfg {
			return m.Go
		}
	}
	t.Fatalf("%s is not in tla/models.json", cfg)
	return modelFigures{}
}

// Protocol models of tla/models.json under a budget that spills their
// queue (a block holds 4,096 states of 72 bytes, so 256 KiB keeps a
// worker's two newest blocks and little more) and their set give their
// recorded figures; the violations give
// the counterexample of the run in memory (with one worker, at the same
// figures).
func TestQueueSpillOnTheProtocolModels(t *testing.T) {
	cfgs := []string{"MCDrainRegistrationSymmetry.cfg", "MCDrainRegistrationView.cfg",
		"MCDrainRegistrationBugSampleBeforeClose.cfg", "MCDrainRegistrationVariantH.cfg"}
	workerSets := []int{1, 2}
	if raceEnabled {
		cfgs, workerSets = []string{"MCDrainRegistrationVariantH.cfg"}, []int{2}
	}
	spilled := map[int]int64{}
	for _, cfg := range cfgs {
		want := recorded(t, cfg)
		m, base, err := drainmodel.Load(filepath.Join("..", "tla", cfg), false)
		require.NoError(t, err)
		for _, workers := range workerSets {
			opts := base
			opts.Workers, opts.MemoryBudget, opts.SpillDir = workers, 256<<10, t.TempDir()
			res, err := modelcheck.Check(context.Background(), m, opts)
			require.NoError(t, err)
			// With two workers each fills its own blocks, and whether one
			// of them has a full block to spill depends on their timing
			// on the narrower models: the spill is required of the sum.
			spilled[workers] += res.QueueSpillBytes
			if workers == 1 {
				require.Positive(t, res.QueueSpillBytes, "%s: the queue moved to disk", cfg)
			}
			if want.TraceLength == 0 {
				require.Equal(t, modelcheck.OK, res.Outcome, "%s: %s", cfg, res.Reason)
				require.Equal(t, want.Distinct, res.Distinct, cfg)
				require.Equal(t, want.Generated, res.Generated, cfg)
				require.Equal(t, want.Depth, res.Depth, cfg)
				continue
			}
			require.Equal(t, modelcheck.Violated, res.Outcome, "%s: %s", cfg, res.Reason)
			require.Len(t, res.Trace, want.TraceLength, cfg)
			opts.MemoryBudget, opts.SpillDir = 0, ""
			mem, err := modelcheck.Check(context.Background(), m, opts)
			require.NoError(t, err)
			if workers == 1 {
				require.Equal(t, want.Distinct, res.Distinct, cfg)
				require.Equal(t, want.Generated, res.Generated, cfg)
				require.Equal(t, mem.Trace, res.Trace, cfg)
			}
		}
	}
	for _, workers := range workerSets {
		require.Positive(t, spilled[workers], "%d worker(s): the queue moved to disk", workers)
	}
}

// labelled is subsets with a state that is not a plain value (a string):
// its queue cannot be written as memory.
type labelled struct{ subsets }

type labelledSet struct {
	s    uint32
	name string
}

func (m *labelled) Init(emit func(labelledSet)) { emit(labelledSet{}) }

func (m *labelled) Next(s labelledSet, emit func(string, labelledSet)) {
	m.subsets.Next(s.s, func(a string, t uint32) { emit(a, labelledSet{t, a}) })
}

func (m *labelled) Encode(dst []byte, s labelledSet) []byte { return m.subsets.Encode(dst, s.s) }

func (m *labelled) Holds(i int, s labelledSet) bool { return m.subsets.Holds(i, s.s) }

func (m *labelled) Vars(s labelledSet) [][2]string { return m.subsets.Vars(s.s) }

// A queue of states that are not plain values stays in memory: past the
// budget the run ends incomplete, and says why.
func TestQueueOfPointersDoesNotSpill(t *testing.T) {
	dir := t.TempDir()
	n, budget := subsetsSize()
	res, err := modelcheck.Check(context.Background(), &labelled{subsets{n: n}}, modelcheck.Options{Workers: 1, MemoryBudget: budget, SpillDir: dir})
	require.NoError(t, err)
	require.Equal(t, modelcheck.Incomplete, res.Outcome)
	require.Contains(t, res.Reason, "reached by the queue of states to expand")
	require.Contains(t, res.Reason, "labelledSet is not one")
	require.Zero(t, res.QueueSpillBytes)
	left, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, left)
}

// The progress reports' queue counts the states found and not yet
// expanded: it never goes below zero, and is zero at the end, with the
// queue on disk (a level read back in segments calls the workers once a
// segment) as in memory.
func TestProgressQueueWithASpilledQueue(t *testing.T) {
	n, budget := subsetsSize()
	for _, spill := range []bool{false, true} {
		var min atomic.Int64
		opts := modelcheck.Options{Workers: 2, ProgressEvery: time.Millisecond, Lookup: modelcheck.LookupSorted,
			Progress: func(p modelcheck.Progress) {
				if p.Queue < min.Load() {
					min.Store(p.Queue)
				}
			}}
		if spill {
			opts.MemoryBudget, opts.SpillDir = budget, t.TempDir()
		}
		res := checkSubsets(t, &subsets{n: n}, opts)
		require.Equal(t, modelcheck.OK, res.Outcome)
		require.Zero(t, min.Load(), "the queue went below zero (spill %v)", spill)
	}
}
