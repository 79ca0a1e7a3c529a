package tracecheck_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/drainproof/drainproof/harness/tracecheck"
	"github.com/drainproof/drainproof/spec"
)

// A name with a space in it (a dispatcher's, a broker's) is a name like
// any other: a walk of a model named so is accepted, with the result of
// the same walk of the model named without spaces.
func TestNamesWithASpaceCheckAlike(t *testing.T) {
	plain := configs()["heartbeat"]
	spaced := plain
	spaced.Dispatchers, spaced.TableTriggers = []string{"d 1", " d2 "}, []string{" d2 "}
	spaced.Brokers = []string{"broker one"}
	for seed := uint64(1); seed <= 3; seed++ {
		want := check(t, encode(t, plain, must(traceOf(t, plain, seed, 150))))
		require.Equal(t, tracecheck.OK, want.Verdict, "%+v", want)
		lines, _ := traceOf(t, spaced, seed, 150)
		data := encode(t, spaced, lines)
		require.Contains(t, string(data), `"d 1"`)
		sameResult(t, want, check(t, data), fmt.Sprintf("seed %d", seed))
	}
}

func must(lines []tracecheck.Line, _ *spec.Model) []tracecheck.Line { return lines }

// WriteRun names a predecessor (the line's "after") on the first line of
// each restarted process T.e, e > 1, as its header does, and on no other
// line: T.1, the first process, succeeds none.
func TestWriteRunNamesAPredecessorOnlyOnARestartsFirstLine(t *testing.T) {
	m, err := spec.New(configs()["heartbeat"])
	require.NoError(t, err)
	restarts := 0
	for seed := uint64(1); seed <= 4; seed++ {
		files, err := tracecheck.WriteRun(t.TempDir(), m, seed, 500, "test")
		require.NoError(t, err)
		for _, f := range files {
			proc := strings.TrimSuffix(filepath.Base(f), ".ndjson")
			want := ""
			if e, ok := strings.CutPrefix(proc, "T."); ok && e != "1" {
				var n int
				_, err := fmt.Sscan(e, &n)
				require.NoError(t, err)
				want = fmt.Sprintf("T.%d", n-1)
				restarts++
			}
			fh, err := os.Open(f)
			require.NoError(t, err)
			sc := bufio.NewScanner(fh)
			sc.Buffer(nil, 1<<20)
			for i := 0; sc.Scan(); i++ {
				var l struct {
					After *string `json:"after"`
				}
				require.NoError(t, json.Unmarshal(sc.Bytes(), &l))
				switch {
				case i <= 1 && want != "":
					require.NotNil(t, l.After, "seed %d: %s line %d", seed, proc, i+1)
					require.Equal(t, want, *l.After, "seed %d: %s line %d", seed, proc, i+1)
				default:
					require.Nil(t, l.After, "seed %d: %s line %d: %s", seed, proc, i+1, sc.Text())
				}
			}
			require.NoError(t, sc.Err())
			require.NoError(t, fh.Close())
		}
		res, err := tracecheck.CheckRun(files, "run", nil, tracecheck.Options{})
		require.NoError(t, err)
		require.Equal(t, tracecheck.OK, res.Verdict, "%+v", res)
	}
	require.Positive(t, restarts, "no walk restarted T")
}
