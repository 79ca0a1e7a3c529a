package main

import (
	"bytes"
	"html/template"
	"os"
	"strconv"
	"strings"

	"github.com/drainproof/drainproof/harness/tracecheck"
)

// htmlContext is the number of merged lines the page shows before the
// line not explained.
const htmlContext = 300

// runPage is the data of the HTML page of a run not accepted.
type runPage struct {
	Res   *tracecheck.Result
	Procs []string
	Rows  []runRow
	From  int // the merged line number of the first row
}

// runRow is one merged line: its text in its process's lane.
type runRow struct {
	N      int
	Lane   int
	Cells  []string
	Marked bool
	Src    string
}

var runTmpl = template.Must(template.New("run").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>{{.Res.File}}: {{.Res.Verdict}}</title>
<style>
body{font-family:sans-serif;font-size:13px}
table{border-collapse:collapse;table-layout:fixed;width:100%}
td,th{border:1px solid #ddd;padding:2px 4px;vertical-align:top;word-break:break-all;font-family:monospace;font-size:11px}
th{background:#eee;position:sticky;top:0}
tr.mark td{background:#fdd}
td.n{width:5em;color:#888}
.dis{color:#a00}
</style></head><body>
<h1>{{.Res.File}}: {{.Res.Verdict}}</h1>
<p><b>Line {{.Res.Line}}</b> of the merged trace{{if .Res.Process}}, process <b>{{.Res.Process}}</b> ({{.Res.ProcessFile}}:{{.Res.ProcessLine}}){{end}}, after {{.Res.Lines}} lines explained: {{.Res.Reason}}</p>
<pre>{{.Res.Text}}</pre>
{{range $i, $c := .Res.Candidates}}
<h3>Candidate state {{$i}}{{if not $c.Enabled}} (the action, with the line's parameters, is not enabled){{end}}</h3>
<ul>{{range $c.Successors}}<li class="dis">a step disagrees on: {{range .Disagree}}{{.Var}} (trace {{.Trace}}, model {{.Model}}) {{end}}</li>{{end}}</ul>
{{if $c.EnabledActions}}<p>Enabled here: {{range $c.EnabledActions}}{{.}} {{end}}</p>{{end}}
<details><summary>state</summary><pre>{{range $c.State}}{{.Name}} = {{.Value}}
{{end}}</pre></details>
{{end}}
<h2>The merged order, one lane per process (lines {{.From}} to {{.Res.Line}})</h2>
<table><tr><th class="n">line</th>{{range .Procs}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Marked}} class="mark" id="rejected"{{end}}><td class="n" title="{{.Src}}">{{.N}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table></body></html>
`))

// writeRunHTML writes the page of run's result res (not accepted).
func writeRunHTML(run []string, res *tracecheck.Result, path string) error {
	m, err := tracecheck.Merge(run)
	if err != nil {
		return err
	}
	lane := map[string]int{}
	for i, p := range m.Procs {
		lane[p] = i
	}
	page := runPage{Res: res, Procs: m.Procs}
	lines := strings.Split(strings.TrimSuffix(string(m.Data), "\n"), "\n")[1:]
	page.From = max(2, res.Line-htmlContext)
	for n := page.From; n <= res.Line; n++ {
		var text, src string
		l := 0
		switch {
		case n-2 < len(lines):
			text = lines[n-2]
			s := m.Src[n-2]
			l, src = lane[m.Procs[s.File]], m.Files[s.File]+":"+itoa(s.Line)
		case m.Cut != nil:
			text, l = m.Cut.Text, lane[m.Cut.Proc]
			src = m.Files[m.Cut.File] + ":" + itoa(m.Cut.Line)
		default:
			continue
		}
		row := runRow{N: n, Lane: l, Cells: make([]string, len(m.Procs)), Marked: n == res.Line, Src: src}
		row.Cells[l] = text
		page.Rows = append(page.Rows, row)
	}
	var buf bytes.Buffer
	if err := runTmpl.Execute(&buf, page); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func itoa(n int) string { return strconv.Itoa(n) }
