package modelcheck_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/drainproof/drainproof/modelcheck"
	"github.com/stretchr/testify/require"
)

// sleepy is a grid whose Next takes time, so a run can be killed half-way.
type sleepy struct{ grid }

func (s *sleepy) Next(p point, emit func(string, point)) {
	time.Sleep(time.Millisecond)
	s.grid.Next(p, emit)
}

// checkpointModel is a 120×120 grid whose invariant fails only at its far
// corner: a search of 239 levels.
func checkpointModel() *sleepy {
	return &sleepy{grid{size: 120, bad: func(x, y int) bool { return x+y == 237 && x == 119 }}}
}

const checkpointChildEnv = "MODELCHECK_CHECKPOINT_CHILD"

// TestCheckpointChild is the run that TestCheckpointKillAndRecover kills;
// it does nothing unless started by it.
func TestCheckpointChild(t *testing.T) {
	dir := os.Getenv(checkpointChildEnv)
	if dir == "" {
		t.Skip("started only by TestCheckpointKillAndRecover")
	}
	_, _ = modelcheck.Check[point](context.Background(), checkpointModel(),
		modelcheck.Options{Workers: 1, CheckpointDir: dir, CheckpointEvery: 20 * time.Millisecond})
}

// A run killed (SIGKILL) half-way resumes from its last checkpoint and
// ends with the figures of an uninterrupted run: with one worker the very
// figures (and trace) single-worker TLC reports, with three the same
// shortest trace.
func TestCheckpointKillAndRecover(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckpointChild$", "-test.count=1")
	// TMPDIR: whatever the killed child leaves in its temporary folder goes
	// with this test's.
	cmd.Env = append(os.Environ(), checkpointChildEnv+"="+dir, "TMPDIR="+t.TempDir())
	require.NoError(t, cmd.Start())
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "checkpoint.bin")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "no checkpoint written")
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, cmd.Process.Kill())
	err := cmd.Wait()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, syscall.SIGKILL, exit.Sys().(syscall.WaitStatus).Signal(), "the child was killed, not finished")

	// The same model without the sleep: the checkpoint names the model by
	// its initial states and the search's options, not its speed.
	m := &checkpointModel().grid
	whole := check(t, m, modelcheck.Options{Workers: 1})
	require.Equal(t, modelcheck.Violated, whole.Outcome)

	res := check(t, m, modelcheck.Options{Workers: 1, Recover: dir})
	require.Greater(t, res.ResumedAt, 1, "resumed from a checkpoint")
	require.Less(t, res.ResumedAt, whole.Depth, "killed half-way")
	require.Equal(t, whole.Outcome, res.Outcome)
	require.Equal(t, whole.Distinct, res.Distinct)
	require.Equal(t, whole.Generated, res.Generated)
	require.Equal(t, whole.Depth, res.Depth)
	require.Equal(t, whole.Trace, res.Trace)

	res = check(t, m, modelcheck.Options{Workers: 3, Recover: dir})
	require.Equal(t, modelcheck.Violated, res.Outcome)
	require.Len(t, res.Trace, len(whole.Trace))
	for i := 1; i < len(res.Trace); i++ {
		prev, cur := res.Trace[i-1].State, res.Trace[i].State
		require.Equal(t, 1, cur.x-prev.x+cur.y-prev.y, "each step is a transition")
	}

	// Another search (no invariant) cannot resume this one.
	_, err = modelcheck.Check[point](context.Background(), m, modelcheck.Options{Recover: dir, Invariants: []string{}})
	require.ErrorIs(t, err, modelcheck.ErrCheckpoint)
}

// Without a kill, a run that checkpoints every level and one resumed from
// its last checkpoint agree; states without a raw layout (here a string
// field) are saved with gob.
type named struct{ grid }

type namedPoint struct {
	Name string
	N    int
}

func (n *named) Init(emit func(namedPoint)) { emit(namedPoint{"p", 0}) }
func (n *named) Next(s namedPoint, emit func(string, namedPoint)) {
	if s.N < 50 {
		emit("Inc", namedPoint{s.Name, s.N + 1})
		emit("Rename", namedPoint{s.Name + "'", s.N + 1})
	}
}
func (n *named) Encode(dst []byte, s namedPoint) []byte {
	return append(append(dst, s.Name...), 0, byte(s.N))
}
func (n *named) Invariants() []string       { return nil }
func (n *named) Holds(int, namedPoint) bool { return true }

func TestCheckpointOfNonRawStates(t *testing.T) {
	dir := t.TempDir()
	first, err := modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{CheckpointDir: dir, CheckpointEvery: time.Nanosecond})
	require.NoError(t, err)
	again, err := modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{Recover: dir, Workers: 2})
	require.NoError(t, err)
	require.Equal(t, 51, again.ResumedAt) // the last level is saved before it is expanded
	require.Equal(t, first.Distinct, again.Distinct)
	require.Equal(t, first.Generated, again.Generated)
	require.Equal(t, first.Depth, again.Depth)

	_, err = modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{Recover: t.TempDir()})
	require.Error(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "checkpoint.bin"), []byte("garbage"), 0o644))
	_, err = modelcheck.Check[namedPoint](context.Background(), &named{}, modelcheck.Options{Recover: dir})
	require.ErrorIs(t, err, modelcheck.ErrCheckpoint)
}
