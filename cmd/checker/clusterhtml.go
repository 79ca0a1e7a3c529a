package main

import (
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/drainproof/drainproof/harness/cluster"
)

// The page of checker cluster --html: per seed, a timeline with one lane
// per process (logcoord, coordinator, n1…): whether it is up, paused,
// draining or down, the collectors' dispatchers registered with it over
// time, and a mark at each fault, SIGTERM, drain done and restart; then
// every event in a table. One self-contained file: inline SVG and CSS, no
// script, nothing fetched.

// Geometry of the timeline, in SVG units (pixels at 100 %).
const (
	tlLeft   = 110  // the lane names
	tlWidth  = 1180 // the time axis
	tlLaneH  = 76
	tlBarH   = 16 // the state bar at the top of a lane
	tlTop    = 24 // the axis labels
	tlFaultY = 31 // the faults' marks, under the bar
	tlLifeY  = 46 // the drain's marks (SIGTERM, liveness, drain done)
	tlExitY  = 61 // exit and restart
	tlShortH = 50 // the lane of a process without dispatchers (logcoord, coordinator)
)

// clusterPage is the data of the page.
type clusterPage struct {
	Verdict string // PASS or FAIL
	Failed  bool
	Title   string
	Runs    []clusterRunView
}

// clusterRunView is one seed's run on the page.
type clusterRunView struct {
	Seed       uint64
	Failed     bool
	Summary    []string
	Violations []string
	Width      int
	Height     int
	Ticks      []tlTick
	Lanes      []tlLane
	FaultsEnd  float64 // x of the faults' end, 0: none
	Events     []tlRow
}

// tlTick is one second mark of the axis.
type tlTick struct {
	X     float64
	Label string
}

// tlLane is one process's lane.
type tlLane struct {
	Name     string
	Y        float64
	Segments []tlSegment
	Line     string // the dispatcher count's polyline points
	MaxDisp  int64
	Marks    []tlMark
}

// tlSegment is a stretch of a process's state.
type tlSegment struct {
	X, W  float64
	State string // up, paused, draining, down
	Title string
}

// tlMark is one event's mark.
type tlMark struct {
	X     float64
	Y     float64
	Glyph string
	Class string
	Title string
}

// tlRow is one line of the events table.
type tlRow struct {
	At      string
	Process string
	What    string
	Class   string
}

// writeClusterHTML writes the page of the runs to w.
func writeClusterHTML(w io.Writer, runs []*cluster.Result, title string) error {
	p := clusterPage{Verdict: "PASS", Title: title}
	for _, r := range runs {
		v := clusterRunOf(r)
		if v.Failed {
			p.Failed, p.Verdict = true, "FAIL"
		}
		p.Runs = append(p.Runs, v)
	}
	return clusterTmpl.Execute(w, p)
}

// clusterRunOf lays out one run.
func clusterRunOf(r *cluster.Result) clusterRunView {
	v := clusterRunView{Seed: r.Seed, Failed: len(r.Violations) > 0, Violations: r.Violations, Width: tlLeft + tlWidth + 20}
	end := r.Wall
	for _, e := range r.Timeline {
		end = max(end, e.At)
	}
	for _, f := range r.Faults {
		end = max(end, f.At)
	}
	if end <= 0 {
		end = time.Second
	}
	x := func(d time.Duration) float64 {
		return float64(tlLeft) + float64(tlWidth)*min(1, max(0, float64(d)/float64(end)))
	}
	step := time.Second
	for end/step > 24 {
		step *= 5
	}
	for t := time.Duration(0); t <= end; t += step {
		v.Ticks = append(v.Ticks, tlTick{X: x(t), Label: fmt.Sprintf("%ds", int(t.Seconds()))})
	}

	took, legacy := drainTimes(r)
	p50, p99, mx := percentiles(took)
	kinds := map[string]int{}
	for _, f := range r.Faults {
		kinds[f.Kind]++
	}
	v.Summary = []string{
		fmt.Sprintf("%d nodes, %d tables, wall %v", r.Nodes, r.Tables, r.Wall.Round(time.Millisecond)),
		fmt.Sprintf("events committed %d, read %d, lost %d, duplicated %d, out of order %d", r.EventsCommitted, r.EventsRead, r.Lost, r.Duplicated, r.OutOfOrder),
		fmt.Sprintf("drains %d complete, %d legacy; latency ms p50 %d, p99 %d, max %d", len(took), legacy, p50, p99, mx),
		fmt.Sprintf("faults %d injected %v, %d restarts; registry history %d operations, porcupine: %s", len(r.Faults), kinds, r.Restarts, r.LinOps, r.LinOutcome),
	}

	procs := r.Processes
	if len(procs) == 0 { // a result recorded before the timeline
		seen := map[string]bool{}
		for _, e := range r.Timeline {
			if e.Process != "" && !seen[e.Process] {
				seen[e.Process] = true
				procs = append(procs, e.Process)
			}
		}
	}
	// The events of each lane, faults included, in time order.
	type ev struct {
		at     time.Duration
		kind   string
		detail string
		value  int64
		fault  bool
	}
	byProc := map[string][]ev{}
	var all []ev
	var allProc []string
	fi, ti := 0, 0
	for fi < len(r.Faults) || ti < len(r.Timeline) {
		if ti == len(r.Timeline) || fi < len(r.Faults) && r.Faults[fi].At <= r.Timeline[ti].At {
			f := r.Faults[fi]
			fi++
			proc, _, _ := strings.Cut(f.Target, "->")
			e := ev{at: f.At, kind: f.Kind, detail: strings.TrimSpace(f.Target + " " + f.Detail), fault: true}
			byProc[proc] = append(byProc[proc], e)
			all, allProc = append(all, e), append(allProc, proc)
			continue
		}
		t := r.Timeline[ti]
		ti++
		if t.Kind == cluster.EventFaultsEnd {
			v.FaultsEnd = x(t.At)
		}
		e := ev{at: t.At, kind: t.Kind, detail: t.Detail, value: t.Value}
		byProc[t.Process] = append(byProc[t.Process], e)
		if t.Kind != cluster.EventDispatchers {
			all, allProc = append(all, e), append(allProc, t.Process)
		}
	}
	var maxDisp int64 = 1
	for _, e := range r.Timeline {
		if e.Kind == cluster.EventDispatchers {
			maxDisp = max(maxDisp, e.Value)
		}
	}
	laneY := float64(tlTop)
	for _, name := range procs {
		lane := tlLane{Name: name, Y: laneY}
		state, since := "down", time.Duration(0)
		flush := func(at time.Duration, next, why string) {
			if at > since || next == "" {
				lane.Segments = append(lane.Segments, tlSegment{X: x(since), W: max(0, x(at)-x(since)), State: state,
					Title: fmt.Sprintf("%s %s from %.2fs to %.2fs%s", name, state, since.Seconds(), at.Seconds(), why)})
			}
			state, since = next, at
		}
		var pts []string
		disp := int64(0)
		baseY := lane.Y + tlLaneH - 8
		dispY := func(n int64) float64 { return baseY - float64(n)*float64(tlLaneH-tlBarH-14)/float64(maxDisp) }
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(0), dispY(0)))
		for _, e := range byProc[name] {
			mark := func(glyph, class, title string) {
				dy := float64(tlLifeY)
				switch class {
				case "fault":
					dy = tlFaultY
				case "exit", "restart":
					dy = tlExitY
				}
				lane.Marks = append(lane.Marks, tlMark{X: x(e.at), Y: lane.Y + dy, Glyph: glyph, Class: class,
					Title: fmt.Sprintf("%.2fs %s: %s", e.at.Seconds(), name, title)})
			}
			switch {
			case e.fault:
				glyph := map[string]string{cluster.FaultKill: "✕", cluster.FaultPause: "❚❚", cluster.FaultPartition: "⟂", cluster.FaultDelay: "≈", cluster.FaultDisk: "⛁"}[e.kind]
				mark(glyph, "fault", "fault "+e.kind+" "+e.detail)
				switch e.kind {
				case cluster.FaultKill:
					flush(e.at, "down", "")
				case cluster.FaultPause:
					flush(e.at, "paused", "")
				}
			case e.kind == cluster.EventStart || e.kind == cluster.EventRestart:
				if e.kind == cluster.EventRestart {
					mark("↻", "restart", "restarted: "+e.detail)
				}
				flush(e.at, "up", "")
			case e.kind == cluster.EventResume:
				if state == "paused" {
					flush(e.at, "up", "")
				}
			case e.kind == cluster.EventSigterm:
				mark("▶", "sigterm", "SIGTERM: drain asked ("+e.detail+")")
				flush(e.at, "draining", "")
			case e.kind == cluster.EventLiveness:
				if e.detail != "ALIVE" {
					mark("◆", "liveness", fmt.Sprintf("seen %s (epoch %d)", e.detail, e.value))
				}
			case e.kind == cluster.EventDrainDone:
				class := "done"
				if !strings.HasPrefix(e.detail, "complete") {
					class = "legacy"
				}
				mark("✔", class, "drain done: "+e.detail)
			case e.kind == cluster.EventExit:
				mark("■", "exit", fmt.Sprintf("exited %d after SIGTERM", e.value))
				flush(e.at, "down", "")
			case e.kind == cluster.EventDispatchers:
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(e.at), dispY(disp)), fmt.Sprintf("%.1f,%.1f", x(e.at), dispY(e.value)))
				disp = e.value
				lane.MaxDisp = max(lane.MaxDisp, e.value)
			}
		}
		flush(end, "", "")
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(end), dispY(disp)))
		if len(pts) > 2 { // a lane with dispatchers: a node's
			lane.Line = strings.Join(pts, " ")
			laneY += tlLaneH
		} else {
			laneY += tlShortH
		}
		v.Lanes = append(v.Lanes, lane)
	}
	v.Height = int(laneY) + 8
	for i, e := range all {
		what := e.kind
		if e.detail != "" {
			what += ": " + e.detail
		}
		if e.kind == cluster.EventExit {
			what = fmt.Sprintf("exit %d", e.value)
		}
		if e.kind == cluster.EventLiveness {
			what = fmt.Sprintf("liveness %s (epoch %d)", e.detail, e.value)
		}
		class := ""
		if e.fault {
			class = "fault"
		}
		proc := allProc[i]
		if proc == "" {
			proc = "(run)"
		}
		v.Events = append(v.Events, tlRow{At: fmt.Sprintf("%.3f", e.at.Seconds()), Process: proc, What: what, Class: class})
	}
	return v
}

var clusterTmpl = template.Must(template.New("cluster").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>checker cluster: {{.Verdict}}</title>
<style>
body{font-family:sans-serif;font-size:14px;margin:12px 16px;color:#222}
#verdict{padding:8px 14px;border-radius:6px;margin:0 0 10px 0;font-size:20px;background:#e3f6ea;border:1px solid #7cc596}
#verdict.fail{background:#fde2e2;border-color:#e08080}
h2{font-size:16px;margin:14px 0 4px 0}
h2.fail{color:#a00}
ul.summary{margin:2px 0;padding-left:18px}
ul.violations li{color:#a00;font-weight:bold}
.legend span{display:inline-block;margin-right:14px}
.sw{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle;border:1px solid #888}
.sw.up{background:#b9e4c4}.sw.paused{background:#f5d77a}.sw.draining{background:#9cc7f2}.sw.down{background:#d4d4d4}
svg text{font-size:12px;font-family:sans-serif}
svg .lane-name{font-weight:bold}
.up{fill:#b9e4c4}.paused{fill:#f5d77a}.draining{fill:#9cc7f2}.down{fill:#d4d4d4}
.mark{font-size:14px;text-anchor:middle;cursor:default}
.mark.fault{fill:#c0262d}.mark.restart{fill:#555}.mark.sigterm{fill:#1c5fb0}.mark.done{fill:#17803a}.mark.legacy{fill:#d97706}.mark.exit{fill:#333}.mark.liveness{fill:#1c5fb0;font-size:10px}
polyline.disp{fill:none;stroke:#7a3fb0;stroke-width:1.5}
line.tick{stroke:#e6e6e6}line.faults-end{stroke:#c0262d;stroke-dasharray:4 3}
table.events{border-collapse:collapse;font-size:12px}
table.events td,table.events th{border:1px solid #ddd;padding:1px 6px;text-align:left}
table.events tr.fault td{color:#c0262d}
</style></head><body>
<div id="verdict"{{if .Failed}} class="fail"{{end}}><b>cluster {{.Verdict}}</b>: {{.Title}}</div>
<div class="legend">
<span><i class="sw up"></i>up</span><span><i class="sw paused"></i>paused (SIGSTOP)</span><span><i class="sw draining"></i>draining (SIGTERM to exit)</span><span><i class="sw down"></i>down</span>
<span style="color:#7a3fb0">― dispatchers registered by the collectors</span>
<span style="color:#c0262d">✕ kill ❚❚ pause ⟂ partition ≈ delay</span><span style="color:#1c5fb0">▶ SIGTERM ◆ liveness seen</span><span style="color:#17803a">✔ drain done</span><span>■ exit ↻ restart</span>
</div>
{{range .Runs}}
<section class="run" id="seed-{{.Seed}}">
<h2{{if .Failed}} class="fail"{{end}}>seed {{.Seed}}: {{if .Failed}}FAIL{{else}}PASS{{end}}</h2>
<ul class="summary">{{range .Summary}}<li>{{.}}</li>{{end}}</ul>
{{if .Violations}}<ul class="violations">{{range .Violations}}<li>{{.}}</li>{{end}}</ul>{{end}}
<svg class="timeline" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
{{$h := .Height}}{{range .Ticks}}<line class="tick" x1="{{.X}}" x2="{{.X}}" y1="16" y2="{{$h}}"/><text x="{{.X}}" y="12" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Lanes}}<g class="lane" data-process="{{.Name}}">
<text class="lane-name" x="4" y="{{.Y}}" dy="13">{{.Name}}</text>{{if .MaxDisp}}<text x="4" y="{{.Y}}" dy="62" fill="#7a3fb0">≤ {{.MaxDisp}} disp.</text>{{end}}
{{$y := .Y}}{{range .Segments}}<rect class="{{.State}}" x="{{.X}}" y="{{$y}}" width="{{.W}}" height="16"><title>{{.Title}}</title></rect>
{{end}}{{if .Line}}<polyline class="disp" points="{{.Line}}"><title>{{.Name}}: dispatchers registered by the collectors (REGISTER OK to REMOVE or the process's end), at most {{.MaxDisp}}</title></polyline>{{end}}
{{range .Marks}}<text class="mark {{.Class}}" x="{{.X}}" y="{{.Y}}">{{.Glyph}}<title>{{.Title}}</title></text>
{{end}}</g>
{{end}}{{if .FaultsEnd}}<line class="faults-end" x1="{{.FaultsEnd}}" x2="{{.FaultsEnd}}" y1="16" y2="{{$h}}"/><text x="{{.FaultsEnd}}" y="{{$h}}" dx="4" dy="-2" fill="#c0262d">faults stop</text>{{end}}
</svg>
<details><summary>{{len .Events}} events (times in seconds since the run's start)</summary>
<table class="events"><tr><th>s</th><th>process</th><th>event</th></tr>
{{range .Events}}<tr{{if .Class}} class="{{.Class}}"{{end}}><td>{{.At}}</td><td>{{.Process}}</td><td>{{.What}}</td></tr>
{{end}}</table></details>
</section>
{{end}}
</body></html>
`))
