package modelcheck

import (
	"fmt"
	"html/template"
	"io"
	"slices"
)

// htmlTrace is the page WriteTraceHTML renders.
var htmlTrace = template.Must(template.New("trace").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1em 1.5em;color:#222}
h1{font-size:1.3em;margin:.2em 0} p.sum{color:#555;margin:.3em 0}
#verdict{padding:.3em .8em;margin:0 0 .4em 0;border-left:6px solid #888;background:#f3f3f3}
#verdict.ok{border-color:#2a7;background:#e3f6ea} #verdict.violated{border-color:#d33;background:#fde2e2} #verdict.incomplete{border-color:#c80;background:#fdf0dc}
p.fail{margin:.3em 0;font-weight:600;color:#a11}
p.loopnote{margin:.3em 0;font-weight:600;color:#a11}
pre.def{background:#f6f8fa;border-left:4px solid #d33;padding:.4em .8em;margin:.4em 0;font-size:12px;max-height:10em;overflow:auto}
button{font-size:12px;margin:.3em 0}
table{border-collapse:separate;border-spacing:0;font-family:ui-monospace,monospace;font-size:12px}
th,td{border-right:1px solid #ccc;border-bottom:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left;background:#fff}
th{background:#f3f3f3;position:sticky;top:0;z-index:2}
th.focus{background:#fde2e2}
td{white-space:nowrap}
td.n,th.n{position:sticky;left:0;z-index:3;min-width:2.2em;max-width:2.2em}
td.step,th.step{position:sticky;left:calc(2.2em + 13px);z-index:3;font-weight:600;min-width:20em;max-width:30em;white-space:normal;box-shadow:2px 0 3px rgba(0,0,0,.15)}
th.n,th.step{z-index:4}
td.long{white-space:normal;min-width:16em;max-width:40em}
td.changed{background:#fff3b0}
td.same{color:#999}
tr.loop td.step{border-left:4px solid #d33}
tr.last td{border-bottom:2px solid #d33}
tr.last td.step{color:#a11}
span.mark{color:#d33;font-weight:700}
table.hide-const [data-const]{display:none}
</style></head><body>
<div id="verdict"{{if .Verdict}} class="{{.Verdict}}"{{end}}><h1>{{.Title}}</h1>
<p class="sum">{{.Summary}}</p></div>
{{if .Fails}}<p class="fail" id="fails">{{.Fails}}</p>{{end}}
{{if .LoopNote}}<p class="loopnote" id="loopnote">↻ {{.LoopNote}}</p>{{end}}
{{if .Definition}}<pre class="def" id="definition">{{.Definition}}</pre>{{end}}
{{if .Rows}}{{if .Constant}}<button id="toggle" onclick="var t=document.getElementById('trace');t.classList.toggle('hide-const');this.textContent=t.classList.contains('hide-const')?'show the {{.Constant}} unchanged columns':'hide the {{.Constant}} unchanged columns'">show the {{.Constant}} unchanged columns</button>{{end}}
<div id="scroller">
<table id="trace" class="hide-const">
<tr><th class="n">#</th><th class="step">step</th>{{range .Cols}}<th{{if .Focus}} class="focus" title="read by the violated property"{{end}}{{if .Const}} data-const{{end}}>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr class="{{.Class}}"><td class="n">{{.N}}</td><td class="step">{{if .LoopStart}}<span class="mark">↻ </span>{{end}}{{.Label}}</td>{{range .Cells}}<td class="{{if .Changed}}changed{{else}}same{{end}}{{if .Long}} long{{end}}"{{if .Const}} data-const{{end}}>{{.Value}}</td>{{end}}</tr>
{{end}}</table></div>
<script>
// The table scrolls in a box that fills the rest of the window, so that
// the title, the failure and the definition stay in view; it opens at the
// loop of a lasso, else at the last step (where the property fails).
window.addEventListener('load', () => {
  const box = document.getElementById('scroller')
  box.style.overflow = 'auto'
  box.style.maxHeight = Math.max(200, window.innerHeight - box.getBoundingClientRect().top - 8) + 'px'
  const head = box.querySelector('tr').offsetHeight
  const loop = box.querySelector('tr.loop')
  const last = box.querySelector('tr.last')
  if (loop) box.scrollTop = loop.offsetTop - head
  else if (last) box.scrollTop = last.offsetTop + last.offsetHeight - box.clientHeight
})
</script>{{end}}
{{if .LoopNote}}<p class="sum">The rows marked in red, from state {{.Loop}} to the last, are the loop.</p>{{end}}
</body></html>
`))

type htmlCell struct {
	Value   string
	Changed bool
	Long    bool // wraps at spaces; short values stay on one line
	Const   bool // the column never changes
}

type htmlRow struct {
	N         int
	Label     string
	Class     string
	LoopStart bool
	Cells     []htmlCell
}

type htmlCol struct {
	Name         string
	Focus, Const bool
}

// HTMLTrace is what WriteTraceHTMLWith shows besides the trace.
type HTMLTrace struct {
	// Title and Summary head the page, in a box coloured by Verdict:
	// "ok" (green), "violated" (red), "incomplete" (amber), or "" (grey).
	Title, Summary, Verdict string
	// LoopStart >= 0 marks where a liveness lasso's loop begins; the
	// page then ends with the step that closes the loop, "Back to state
	// N: LoopLabel" (the state it returns to), or "Stuttering" when
	// LoopLabel is empty, as the text report does.
	LoopStart int
	// LoopLabel labels the step from the last state back to the state at
	// LoopStart (modelcheck.Result's LoopLabel).
	LoopLabel string
	// Fails, if set, is said above the table: where the property fails.
	Fails string
	// Definition, if set, is shown above the table: the violated
	// property's definition (TLA+ text, say).
	Definition string
	// Focus names the variables to show first (those the violated
	// property reads), highlighted.
	Focus []string
}

// WriteTraceHTML renders a trace as a self-contained HTML page: one row a
// step, one column a variable, the cells a step changed highlighted. title
// and summary head the page; loopStart >= 0 marks where a liveness lasso's
// loop begins. Models that do not implement VarLister get one column with
// the whole state. See WriteTraceHTMLWith for the property's definition and
// the variables to show first.
func WriteTraceHTML[S any](w io.Writer, m Model[S], trace []Step[S], loopStart int, title, summary string) error {
	return WriteTraceHTMLWith(w, m, trace, HTMLTrace{Title: title, Summary: summary, LoopStart: loopStart})
}

// WriteTraceHTMLWith renders a trace as WriteTraceHTML does, with what h
// adds: the step columns stay in view when the table scrolls sideways,
// h.Focus's variables come first, h.Definition is shown above the table,
// and the columns no step changes are collapsed behind a button.
func WriteTraceHTMLWith[S any](w io.Writer, m Model[S], trace []Step[S], h HTMLTrace) error {
	vl, hasVars := m.(VarLister[S])
	states := make([][][2]string, len(trace))
	for i, st := range trace {
		states[i] = [][2]string{{"state", fmt.Sprintf("%+v", st.State)}}
		if hasVars {
			states[i] = vl.Vars(st.State)
		}
	}
	// Column order: the focus variables, then those some step changes,
	// then the constant ones, each group in the model's order.
	var cols []htmlCol
	var order []int
	if len(states) > 0 {
		n := len(states[0])
		focus := func(j int) bool { return slices.Contains(h.Focus, states[0][j][0]) }
		constant := func(j int) bool {
			for _, s := range states[1:] {
				if j >= len(s) || s[j] != states[0][j] {
					return false
				}
			}
			return len(states) > 1
		}
		for pass := 0; pass < 3; pass++ {
			for j := 0; j < n; j++ {
				f, c := focus(j), constant(j)
				if pass == 0 && f || pass == 1 && !f && !c || pass == 2 && !f && c {
					order = append(order, j)
					cols = append(cols, htmlCol{Name: states[0][j][0], Focus: f, Const: c && !f})
				}
			}
		}
	}
	// at is state i's value of column j: empty where the state lists
	// fewer variables than the first (Vars need not list the same ones
	// in every state).
	at := func(i, j int) [2]string {
		if j < len(states[i]) {
			return states[i][j]
		}
		return [2]string{states[0][j][0], ""}
	}
	var rows []htmlRow
	for i, st := range trace {
		row := htmlRow{N: i + 1, Label: st.Label, LoopStart: h.LoopStart >= 0 && i == h.LoopStart}
		if h.LoopStart >= 0 && i >= h.LoopStart {
			row.Class = "loop"
		}
		if i == len(trace)-1 && h.LoopStart < 0 {
			row.Class += " last"
		}
		for k, j := range order {
			v := at(i, j)
			changed := i == 0 || at(i-1, j) != v
			row.Cells = append(row.Cells, htmlCell{Value: v[1], Changed: changed, Long: len(v[1]) > 32, Const: cols[k].Const})
		}
		rows = append(rows, row)
	}
	loop, note := 0, ""
	if h.LoopStart >= 0 && h.LoopStart < len(trace) {
		// The closing step, as a row of its own: the state it leads to
		// is the loop's first, compared with the last state.
		n, k := len(trace), h.LoopStart+1
		back := htmlRow{N: n + 1, Class: "loop back last", Label: fmt.Sprintf("Back to state %d: %s", k, h.LoopLabel)}
		to := k - 1
		if h.LoopLabel == "" {
			back.Label, to = "Stuttering", n-1
		}
		for kk, j := range order {
			v := at(to, j)
			changed := at(n-1, j) != v
			back.Cells = append(back.Cells, htmlCell{Value: v[1], Changed: changed, Long: len(v[1]) > 32, Const: cols[kk].Const})
		}
		rows = append(rows, back)
		loop, note = k, LoopText(n, h.LoopStart, h.LoopLabel)
	}
	constant := 0
	for _, c := range cols {
		if c.Const {
			constant++
		}
	}
	return htmlTrace.Execute(w, struct {
		Title, Summary, Verdict, Fails, Definition, LoopNote string
		Cols                                                 []htmlCol
		Rows                                                 []htmlRow
		Loop, Constant                                       int
	}{h.Title, h.Summary, h.Verdict, h.Fails, h.Definition, note, cols, rows, loop, constant})
}

// LoopText says in words how a lasso of n states whose loop starts at
// index loopStart goes on forever: which steps make the loop, the last of
// them the closing step labelled loopLabel (empty: the last state
// stutters). Steps and states count from 1, as the reports number them;
// the closing step is step n+1, so that no one reads the last action as
// the one that repeats.
func LoopText(n, loopStart int, loopLabel string) string {
	k := loopStart + 1
	if loopLabel == "" {
		return fmt.Sprintf("From state %d on nothing changes: the behaviour stutters there forever (step %d, Stuttering).", k, n+1)
	}
	steps := fmt.Sprintf("steps %d–%d", k+1, n+1)
	if k == n {
		steps = fmt.Sprintf("step %d", n+1)
	}
	return fmt.Sprintf("From state %d the behaviour goes round a loop forever: %s, the last of which (%s) leads back to state %d.", k, steps, loopLabel, k)
}
