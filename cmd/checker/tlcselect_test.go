package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/drainmodel"
)

// TLC's heap follows the machine: half its memory for the heap, a quarter
// for off-heap fingerprints; an explicit --heap gives the direct memory
// half of it; 0 leaves the JVM's defaults.
func TestTLCHeapFlags(t *testing.T) {
	got, err := tlcHeapFlags("", 16<<30)
	require.NoError(t, err)
	require.Equal(t, []string{"-Xmx8192m", "-XX:MaxDirectMemorySize=4096m"}, got)
	got, err = tlcHeapFlags("2GiB", 16<<30)
	require.NoError(t, err)
	require.Equal(t, []string{"-Xmx2048m", "-XX:MaxDirectMemorySize=1024m"}, got)
	got, err = tlcHeapFlags("0", 16<<30)
	require.NoError(t, err)
	require.Nil(t, got)
	got, err = tlcHeapFlags("", 0) // memory unknown: the JVM decides
	require.NoError(t, err)
	require.Nil(t, got)
	_, err = tlcHeapFlags("1MiB", 16<<30)
	require.ErrorContains(t, err, "--heap")
}

// --max-seconds selects by the recorded TLC time, the -continue pass's
// included when that pass will run (a recorded -continue count to compare
// with, or --record); a model with no recorded time is not selected, and
// large models stay out without --all.
func TestTLCMaxSecondsSelects(t *testing.T) {
	quickOK := drainmodel.Entry{Config: "ok.cfg", Expected: "ok", TLC: &drainmodel.Figures{Seconds: 10}}
	slowOK := drainmodel.Entry{Config: "slow.cfg", Expected: "ok", TLC: &drainmodel.Figures{Seconds: 50}}
	bugNoCont := drainmodel.Entry{Config: "bug.cfg", Expected: "violated", Violated: "DrainSafety", TLC: &drainmodel.Figures{Seconds: 2}}
	bugCont := drainmodel.Entry{Config: "bugc.cfg", Expected: "violated", Violated: "DrainSafety",
		TLC: &drainmodel.Figures{Seconds: 2, ContinueDistinct: 100, ContinueSeconds: 70}}
	live := drainmodel.Entry{Config: "live.cfg", Expected: "violated", Violated: "DrainCompletes", Liveness: true,
		TLC: &drainmodel.Figures{Seconds: 15, ContinueSeconds: 900}}
	unrecorded := drainmodel.Entry{Config: "new.cfg", Expected: "ok"}
	large := drainmodel.Entry{Config: "large.cfg", Expected: "ok", Large: true, TLC: &drainmodel.Figures{Seconds: 1}}
	all := []drainmodel.Entry{quickOK, slowOK, bugNoCont, bugCont, live, unrecorded, large}
	pick := func(f tlcFlags) []string {
		t.Helper()
		s := &tlcSession{f: f}
		var got []string
		for i := range all {
			if s.selected(&all[i]) {
				got = append(got, all[i].Config)
			}
		}
		return got
	}
	require.Equal(t, []string{"ok.cfg", "bug.cfg", "live.cfg"}, pick(tlcFlags{whole: true, maxSeconds: 20}))
	require.Equal(t, []string{"ok.cfg", "slow.cfg", "bug.cfg", "live.cfg"}, pick(tlcFlags{whole: true, maxSeconds: 60}),
		"bugc.cfg's -continue pass takes 70 s more")
	require.Equal(t, []string{"ok.cfg", "slow.cfg", "bug.cfg", "bugc.cfg", "live.cfg"}, pick(tlcFlags{whole: true, maxSeconds: 72}))
	require.Equal(t, []string{"ok.cfg", "slow.cfg", "bug.cfg", "bugc.cfg", "live.cfg"}, pick(tlcFlags{whole: false, maxSeconds: 60}),
		"without -continue only the first pass counts")
	require.Equal(t, []string{"ok.cfg", "bug.cfg", "live.cfg", "large.cfg"}, pick(tlcFlags{whole: true, maxSeconds: 20, all: true}))
	require.Equal(t, []string{"ok.cfg", "slow.cfg", "bug.cfg", "bugc.cfg", "live.cfg", "new.cfg"}, pick(tlcFlags{whole: true}))
}

// The -continue pass runs for a safety violation only when there is a
// recorded count to compare it with, or to record one.
func TestTLCRunsContinue(t *testing.T) {
	bug := drainmodel.Entry{Expected: "violated", Violated: "DrainSafety", TLC: &drainmodel.Figures{Seconds: 2}}
	bugCont := drainmodel.Entry{Expected: "violated", Violated: "DrainSafety", TLC: &drainmodel.Figures{ContinueDistinct: 5}}
	live := drainmodel.Entry{Expected: "violated", Violated: "DrainCompletes", Liveness: true, TLC: &drainmodel.Figures{ContinueDistinct: 5}}
	ok := drainmodel.Entry{Expected: "ok", TLC: &drainmodel.Figures{}}
	compare := &tlcSession{f: tlcFlags{whole: true}}
	require.False(t, compare.runsContinue(&bug))
	require.True(t, compare.runsContinue(&bugCont))
	require.False(t, compare.runsContinue(&live))
	require.False(t, compare.runsContinue(&ok))
	rec := &tlcSession{f: tlcFlags{whole: true, record: true}}
	require.True(t, rec.runsContinue(&bug))
	require.False(t, rec.runsContinue(&ok))
	off := &tlcSession{f: tlcFlags{whole: false, record: true}}
	require.False(t, off.runsContinue(&bugCont))
}
