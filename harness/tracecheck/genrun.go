package tracecheck

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/drainproof/drainproof/spec"
)

// WriteRun walks m as Generate does and writes the walk as the
// per-process traces of one run into dir (created): the coordinator's
// actions in coord.ndjson, the LogCoordinator's in logcoord.ndjson, T's
// in T.1.ndjson, and from each restart on in the next T.e.ndjson. Each
// line's clock is its place in the walk, and a line depends on what the
// implementation's would (docs/trace.md): a receive on the send of its
// message (a LogCoordinator's answer: of the coordinator's query), and an
// upgrade restart on the coordinator's last line. The merged order is the walk. It writes as it
// walks, so a run may be longer than memory; for benchmarks and the
// checker's memory figure. It returns the files.
func WriteRun(dir string, m *spec.Model, seed uint64, steps int, source string) (files []string, err error) {
	return WriteRunWithout(dir, m, seed, steps, nil, source)
}

// WriteRunWithout is WriteRun on the walk of GenerateWithout: one that
// never takes the actions named in skip. Without NodeCrashRestart the
// walk drains T and upgrades it, so the run crosses an upgrade restart:
// T's next process, its header and first line naming T's last as the
// process it succeeds, that first line depending on the coordinator's
// last. With nothing skipped it is WriteRun.
func WriteRunWithout(dir string, m *spec.Model, seed uint64, steps int, skip []string, source string) (files []string, err error) {
	return WriteRunGuided(dir, m, seed, steps, Guide{Skip: skip}, source)
}

// WriteRunGuided is WriteRun on the walk of GenerateGuided. Guided to
// skip NodeCrashRestart until UpgradeRestart, the run crosses the upgrade
// restart (T.2) and then crash restarts (T.3 on), each process's header
// and first line naming the one it succeeds.
func WriteRunGuided(dir string, m *spec.Model, seed uint64, steps int, g Guide, source string) (files []string, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	h := HeaderFor(m.Config(), source)
	type proc struct {
		f    *os.File
		w    *bufio.Writer
		last uint64
	}
	procs := map[string]*proc{}
	open := func(name, after string) (*proc, error) {
		path := filepath.Join(dir, name+".ndjson")
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		p := &proc{f: f, w: bufio.NewWriterSize(f, 1<<16)}
		procs[name] = p
		files = append(files, path)
		ph := h
		ph.Process, ph.After = name, after
		hb, err := json.Marshal(ph)
		if err != nil {
			return nil, err
		}
		_, err = p.w.Write(append(hb, '\n'))
		return p, err
	}
	defer func() {
		for _, p := range procs {
			err = errors.Join(err, p.w.Flush(), p.f.Close())
		}
	}()
	for _, n := range []string{"coord", "logcoord", "T.1"} {
		if _, err := open(n, ""); err != nil {
			return files, err
		}
	}
	t, epoch := "T.1", 1
	sends := map[string]string{} // the stamp of a message's last send, by the message's JSON
	var clock uint64
	var buf []byte
	err = GenerateGuided(m, seed, steps, g, func(l Line) error {
		clock++
		name := t
		var from []string
		switch {
		case strings.HasPrefix(l.Action, "Coord"), strings.HasPrefix(l.Action, "Maintainer"):
			name = "coord"
		case strings.HasPrefix(l.Action, "LogCoord"):
			name = "logcoord"
		case l.Action == "NodeCrashRestart" || l.Action == "UpgradeRestart":
			epoch++
			after := t
			t = "T." + strconv.Itoa(epoch)
			if _, err := open(t, after); err != nil {
				return err
			}
			name = t
			if st := stampOf("coord", procs["coord"].last); st != "" && l.Action == "UpgradeRestart" {
				from = append(from, st)
			}
		}
		if mp, ok := l.Params["m"].(map[string]any); ok && isRecvAction(l.Action) {
			if st, ok := sends[paramKey(mp)]; ok && st != "" {
				from = append(from, st)
			}
		}
		p := procs[name]
		stamp := `"p":"` + name + `","c":` + strconv.FormatUint(clock, 10)
		for _, k := range []string{"m", "reply"} {
			if mp, ok := l.Params[k].(map[string]any); ok && (k == "reply" || !isRecvAction(l.Action)) {
				sends[paramKey(mp)] = `{` + stamp + `}`
			}
		}
		body, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf = append(buf[:0], '{')
		buf = append(buf, stamp...)
		if len(from) > 0 {
			buf = append(buf, `,"from":[`+strings.Join(from, ",")+`]`...)
		}
		if epoch > 1 && name == t && p.last == 0 {
			buf = append(buf, `,"after":"T.`+strconv.Itoa(epoch-1)+`"`...)
		}
		buf = append(append(buf, ','), body[1:]...)
		p.last = clock
		_, err = p.w.Write(append(buf, '\n'))
		return err
	})
	return files, err
}

func stampOf(proc string, clock uint64) string {
	if clock == 0 {
		return ""
	}
	return fmt.Sprintf(`{"p":%q,"c":%d}`, proc, clock)
}

// isRecvAction reports whether a receives a message (its m is taken, not
// sent): the Recv actions but the REGISTER's, and the LogCoordinator's
// answers, which take the coordinator's query.
func isRecvAction(a string) bool {
	return strings.Contains(a, "Recv") && a != recvRegAction || strings.HasPrefix(a, "LogCoordAnswer")
}

// paramKey is a message, as a line's parameter, as a map key.
func paramKey(mp map[string]any) string {
	b, _ := json.Marshal(mp)
	return string(b)
}
