package modelcheck

import (
	"fmt"
	"html/template"
	"io"
)

// htmlTrace is the page WriteTraceHTML renders.
var htmlTrace = template.Must(template.New("trace").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.3em} p.sum{color:#555}
table{border-collapse:collapse;font-family:ui-monospace,monospace;font-size:12px}
th,td{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}
th{background:#f3f3f3;position:sticky;top:0}
td.step{font-weight:600;min-width:16em;max-width:26em}
td{white-space:nowrap}
td.step,td.long{white-space:normal;min-width:16em}
td.changed{background:#fff3b0}
td.same{color:#999}
tr.loop td.step{border-left:4px solid #d33}
tr.last td{border-bottom:2px solid #d33}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="sum">{{.Summary}}</p>
<table>
<tr><th>#</th><th>step</th>{{range .Vars}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr class="{{.Class}}"><td>{{.N}}</td><td class="step">{{.Label}}</td>{{range .Cells}}<td class="{{if .Changed}}changed{{else}}same{{end}}{{if .Long}} long{{end}}">{{.Value}}</td>{{end}}</tr>
{{end}}</table>
{{if .Loop}}<p class="sum">The steps marked in red from step {{.Loop}} on repeat forever.</p>{{end}}
</body></html>
`))

type htmlCell struct {
	Value   string
	Changed bool
	Long    bool // wraps at spaces; short values stay on one line
}

type htmlRow struct {
	N     int
	Label string
	Class string
	Cells []htmlCell
}

// WriteTraceHTML renders a trace as a self-contained HTML page: one row a
// step, one column a variable, the cells a step changed highlighted. title
// and summary head the page; loopStart >= 0 marks where a liveness lasso's
// loop begins. Models that do not implement VarLister get one column with
// the whole state.
func WriteTraceHTML[S any](w io.Writer, m Model[S], trace []Step[S], loopStart int, title, summary string) error {
	vl, hasVars := m.(VarLister[S])
	var names []string
	var rows []htmlRow
	var prev [][2]string
	for i, st := range trace {
		vars := [][2]string{{"state", fmt.Sprintf("%+v", st.State)}}
		if hasVars {
			vars = vl.Vars(st.State)
		}
		if names == nil {
			for _, v := range vars {
				names = append(names, v[0])
			}
		}
		row := htmlRow{N: i + 1, Label: st.Label}
		if loopStart >= 0 && i >= loopStart {
			row.Class = "loop"
		}
		if i == len(trace)-1 {
			row.Class += " last"
		}
		for j, v := range vars {
			changed := prev == nil || j >= len(prev) || prev[j] != v
			row.Cells = append(row.Cells, htmlCell{Value: v[1], Changed: changed, Long: len(v[1]) > 32})
		}
		rows = append(rows, row)
		prev = vars
	}
	loop := 0
	if loopStart >= 0 {
		loop = loopStart + 1
	}
	return htmlTrace.Execute(w, struct {
		Title, Summary string
		Vars           []string
		Rows           []htmlRow
		Loop           int
	}{title, summary, names, rows, loop})
}
