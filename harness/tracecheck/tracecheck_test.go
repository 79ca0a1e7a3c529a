package tracecheck_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/drainmodel"
	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// traceOf generates a seeded walk of cfg's model and writes it as a trace.
func traceOf(t testing.TB, cfg spec.Config, seed uint64, steps int) ([]tracecheck.Line, *spec.Model) {
	t.Helper()
	m, err := spec.New(cfg)
	require.NoError(t, err)
	lines, err := tracecheck.Generate(m, seed, steps)
	require.NoError(t, err)
	return lines, m
}

func encode(t testing.TB, cfg spec.Config, lines []tracecheck.Line) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, tracecheck.Write(&buf, tracecheck.HeaderFor(cfg, "test"), lines))
	return buf.Bytes()
}

func check(t testing.TB, data []byte) tracecheck.Result {
	t.Helper()
	res, err := tracecheck.Check(bytes.NewReader(data), "t.ndjson", nil, tracecheck.Options{})
	require.NoError(t, err)
	return res
}

func configs() map[string]spec.Config {
	hb := tracecheck.TraceConfig(spec.DefaultConfig())
	lc := hb
	lc.Transport = spec.TransportLogCoord
	three := hb
	three.Dispatchers, three.TableTriggers = []string{"d1", "d2", "d3"}, []string{"d3"}
	return map[string]spec.Config{"heartbeat": hb, "logcoord": lc, "three": three}
}

func TestGeneratedTracesAccepted(t *testing.T) {
	for name, cfg := range configs() {
		t.Run(name, func(t *testing.T) {
			for seed := uint64(1); seed <= 40; seed++ {
				lines, _ := traceOf(t, cfg, seed, 300)
				res := check(t, encode(t, cfg, lines))
				require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
				require.Equal(t, len(lines), res.Lines)
			}
		})
	}
}

// observed returns the lines (indices) whose vars include name.
func observed(lines []tracecheck.Line, name string) []int {
	var out []int
	for i, l := range lines {
		if _, ok := l.Vars[name]; ok {
			out = append(out, i)
		}
	}
	return out
}

func clone(lines []tracecheck.Line) []tracecheck.Line {
	out := make([]tracecheck.Line, len(lines))
	for i, l := range lines {
		out[i] = tracecheck.Line{Action: l.Action, Params: l.Params, Vars: map[string]any{}}
		for k, v := range l.Vars {
			out[i].Vars[k] = v
		}
	}
	return out
}

// TestMutatedValuesRejected changes one observed count, epoch or liveness
// of an accepted trace: the trace is rejected at that line (line 1 is the
// header, so trace line i is file line i+2), and the rejection names the
// variable with both values.
func TestMutatedValuesRejected(t *testing.T) {
	cfg := configs()["heartbeat"]
	mutations := map[string]func(v any) any{
		"count": func(v any) any {
			c := map[string]any{}
			for b, n := range v.(map[string]any) {
				c[b] = n.(int) + 1
			}
			return c
		},
		"coordCount": func(v any) any { return v.(int) + 2 },
		"epoch": func(v any) any {
			if v.(int) == spec.MaxEpochLimit {
				return v.(int) - 1 // one more would be past the bound: incomplete
			}
			return v.(int) + 1
		},
		"coordEpoch": func(v any) any { return v.(int) - 1 },
		"liveness": func(v any) any {
			return map[string]string{"ALIVE": "DRAINING", "DRAINING": "STOPPING", "STOPPING": "ALIVE"}[v.(string)]
		},
		"coordLiveness": func(v any) any {
			return map[string]string{"ALIVE": "STOPPING", "DRAINING": "ALIVE", "STOPPING": "DRAINING"}[v.(string)]
		},
	}
	for name, mutate := range mutations {
		t.Run(name, func(t *testing.T) {
			tried := 0
			for seed := uint64(1); seed <= 10; seed++ {
				lines, _ := traceOf(t, cfg, seed, 200)
				at := observed(lines, name)
				for k := 0; k < len(at); k += max(1, len(at)/5) {
					i := at[k]
					bad := clone(lines)
					bad[i].Vars[name] = mutate(bad[i].Vars[name])
					res := check(t, encode(t, cfg, bad))
					require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d line %d: %s", seed, i+2, res.Reason)
					require.Equal(t, i+2, res.Line, "seed %d", seed)
					require.NotEmpty(t, res.Candidates)
					found := false
					for _, c := range res.Candidates {
						for _, s := range c.Successors {
							for _, d := range s.Disagree {
								found = found || d.Var == name || strings.HasPrefix(d.Var, name+"[")
							}
						}
					}
					require.True(t, found, "the rejection names %s: %+v", name, res.Candidates)
					tried++
				}
			}
			require.Greater(t, tried, 10)
		})
	}
}

// TestDroppedLineRejected drops a BrokerSubscribe line followed by a line
// of T that observes the pc of every dispatcher (not a restart, which
// would erase the subscription): that line is then not explained.
func TestDroppedLineRejected(t *testing.T) {
	cfg := configs()["heartbeat"]
	tried := 0
	for seed := uint64(1); seed <= 40; seed++ {
		lines, _ := traceOf(t, cfg, seed, 200)
		for i, l := range lines {
			if l.Action != "BrokerSubscribe" || i+1 == len(lines) || lines[i+1].Vars["pc"] == nil ||
				strings.Contains(lines[i+1].Action, "Restart") {
				continue
			}
			bad := append(clone(lines[:i]), lines[i+1:]...)
			res := check(t, encode(t, cfg, bad))
			require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d, line %d dropped", seed, i+2)
			require.Equal(t, i+2, res.Line)
			tried++
		}
	}
	require.Greater(t, tried, 10)
}

// TestSwappedLinesRejected swaps a registration's admission with its
// subscription: the subscription comes first, from pc gated.
func TestSwappedLinesRejected(t *testing.T) {
	cfg := configs()["heartbeat"]
	tried := 0
	for seed := uint64(1); seed <= 20; seed++ {
		lines, _ := traceOf(t, cfg, seed, 200)
		for i := 0; i+1 < len(lines); i++ {
			if lines[i].Action != "BrokerAdmit" || lines[i+1].Action != "BrokerSubscribe" {
				continue
			}
			bad := clone(lines)
			bad[i], bad[i+1] = bad[i+1], bad[i]
			res := check(t, encode(t, cfg, bad))
			require.Equal(t, tracecheck.Rejected, res.Verdict, "seed %d, lines %d and %d swapped", seed, i+2, i+3)
			require.Equal(t, i+2, res.Line)
			tried++
		}
	}
	require.Greater(t, tried, 5)
}

// TestReceiveBeforeSendRejected swaps the first send of a message with
// the receive that follows it at once: the receive then takes a message
// never sent.
func TestReceiveBeforeSendRejected(t *testing.T) {
	tried := 0
	for _, name := range []string{"heartbeat", "logcoord"} {
		cfg := configs()[name]
		for seed := uint64(1); seed <= 20; seed++ {
			lines, _ := traceOf(t, cfg, seed, 200)
			sent := map[string]bool{}
			for i := 0; i+1 < len(lines); i++ {
				m := fmt.Sprint(lines[i].Params["m"])
				first := lines[i].Params["m"] != nil && !strings.Contains(lines[i].Action, "Recv") && !sent[m]
				sent[m] = true
				if !first || !strings.Contains(lines[i+1].Action, "Recv") || fmt.Sprint(lines[i+1].Params["m"]) != m {
					continue
				}
				bad := clone(lines)
				bad[i], bad[i+1] = bad[i+1], bad[i]
				res := check(t, encode(t, cfg, bad))
				require.Equal(t, tracecheck.Rejected, res.Verdict, "%s seed %d, lines %d and %d swapped", name, seed, i+2, i+3)
				require.Equal(t, i+2, res.Line)
				tried++
			}
		}
	}
	require.Greater(t, tried, 10)
}

// TestBuggyModelTracesRejected writes traces of each bug model of tla/
// (MCDrainRegistrationBug*.cfg: the implementation with the bug), with the
// trace bounds, and checks them against the same constants without the
// bugs: some trace of every bug that adds behaviour is rejected. A bug
// that only removes behaviour (NoReReport, whose model checks liveness
// property: the report is not resent, the drain stalls) is invisible to
// trace validation, and no trace of it is rejected.
func TestBuggyModelTracesRejected(t *testing.T) {
	cfgs, err := filepath.Glob("../../tla/MCDrainRegistrationBug*.cfg")
	require.NoError(t, err)
	require.NotEmpty(t, cfgs)
	for _, path := range cfgs {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "MCDrainRegistrationBug"), ".cfg")
		if strings.HasSuffix(name, "Live") {
			continue // the same bug as its safety model
		}
		t.Run(name, func(t *testing.T) {
			m, opts, err := drainmodel.LoadSpec(path, true)
			require.NoError(t, err)
			buggy := tracecheck.TraceConfig(m.Config())
			good := buggy
			good.Bugs = 0
			livenessOnly := len(opts.Liveness) > 0
			rejected, seeds := 0, 0
			for seed := uint64(1); seed <= 300 && rejected == 0; seed++ {
				lines, _ := traceOf(t, buggy, seed, 300)
				res := check(t, encode(t, good, lines))
				require.NotEqual(t, tracecheck.Incomplete, res.Verdict)
				if res.Verdict == tracecheck.Rejected {
					rejected++
				}
				seeds++
			}
			if livenessOnly {
				require.Zero(t, rejected, "a bug that only removes behaviour")
				return
			}
			require.Positive(t, rejected, "no trace of %s rejected", name)
			t.Logf("%s: first rejected trace at seed %d", name, seeds)
		})
	}
}

// TestWeakObservationsAccepted strips the dispatcher parameters (but a
// REGISTER's), the restarts' versions and every observed variable of T's
// lines (collectors, brokers, service, node): the traces are still
// accepted, with larger candidate sets; a candidate bound of exactly the
// largest set still accepts them, and one below it makes them incomplete.
func TestWeakObservationsAccepted(t *testing.T) {
	cfg := configs()["three"]
	cfg.Dispatchers, cfg.TableTriggers = []string{"d1", "d2", "d3", "d4", "d5", "d6", "d7", "d8"}, []string{"d8"}
	cfg.Brokers = []string{"b1", "b2"}
	cfg.Versions = []string{"new", "legacy"}
	most := 0
	for seed := uint64(1); seed <= 20; seed++ {
		lines, _ := traceOf(t, cfg, seed, 300)
		weak := clone(lines)
		for i := range weak {
			if _, pair := weak[i].Params["b"]; !pair {
				delete(weak[i].Params, "d")
			}
			delete(weak[i].Params, "v")
			if !strings.HasPrefix(weak[i].Action, "Coord") && !strings.HasPrefix(weak[i].Action, "LogCoord") {
				weak[i].Vars = nil
			}
		}
		data := encode(t, cfg, weak)
		res := check(t, data)
		require.Equal(t, tracecheck.OK, res.Verdict, "seed %d: %+v", seed, res)
		most = max(most, res.MaxCandidates)
		exact, err := tracecheck.CheckBytes(data, "t", nil, tracecheck.Options{MaxCandidates: res.MaxCandidates})
		require.NoError(t, err)
		require.Equal(t, tracecheck.OK, exact.Verdict, "seed %d: a bound of exactly the largest set is enough", seed)
		if res.MaxCandidates > 1 {
			small, err := tracecheck.CheckBytes(data, "t", nil, tracecheck.Options{MaxCandidates: res.MaxCandidates - 1})
			require.NoError(t, err)
			require.Equal(t, tracecheck.Incomplete, small.Verdict)
			require.Contains(t, small.Reason, "--max-candidates", "the reason names the bound")
		}
	}
	t.Logf("largest candidate set %d", most)
	require.Greater(t, most, 1, "some trace needs more than one candidate")
}

// TestGenerateWritesTheStepsAsked: a walk is the number of lines asked
// for (the default model's walks never end before 300 actions).
func TestGenerateWritesTheStepsAsked(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		lines, _ := traceOf(t, configs()["heartbeat"], seed, 300)
		require.Len(t, lines, 300, "seed %d", seed)
	}
}

// TestObserveSkipsUnobservableNames: Observe gives the observable
// variables named, and skips the unobservable (net, registrations) and
// unknown ones.
func TestObserveSkipsUnobservableNames(t *testing.T) {
	m, err := spec.New(spec.DefaultConfig())
	require.NoError(t, err)
	s := m.InitState()
	got := tracecheck.Observe(m, &s, []string{"net", "registrations", "nosuch", "epoch"})
	require.Equal(t, map[string]any{"epoch": int(s.Epoch)}, got)
}
