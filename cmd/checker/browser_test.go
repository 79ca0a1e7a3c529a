package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/drainproof/drainproof/harness/cluster"
	"github.com/drainproof/drainproof/tla"
	"github.com/stretchr/testify/require"
)

// The browser tests open the HTML reports in a real browser (Debian's
// chromium, which .ci/run installs) at 1400×900 and check what a person
// sees on the first screen. DRAINPROOF_SCREENSHOTS names a folder for the
// screenshots (the README's come from
// DRAINPROOF_SCREENSHOTS=$PWD/docs/img go test -run Browser ./cmd/checker);
// otherwise they go to the test's temporary folder.

const viewW, viewH = 1400, 900

// chromiumPath returns the chromium binary, or skips the test when this
// machine has none (CI must have one: there it fails).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no chromium binary: .ci/run must install Debian's chromium for the browser tests")
	}
	t.Skip("no chromium binary on this machine: install Debian's chromium (apt-get install -y chromium) to run the browser tests")
	return ""
}

// browser starts a headless chromium, or skips the test when there is no
// chromium binary on this machine (CI must have one: there it fails).
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	// The profile and chromium's own temporary files go with the test
	// (its TempDir is removed after the browser, its cleanup being older).
	tmp := t.TempDir()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.WindowSize(viewW, viewH), chromedp.Flag("hide-scrollbars", false),
		chromedp.UserDataDir(filepath.Join(tmp, "profile")), chromedp.Env("TMPDIR="+tmp))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTimeout()
		_ = chromedp.Cancel(ctx) // closes the browser and waits for it
		cancel()
		cancelAlloc()
	})
	return ctx
}

// onScreen is the JavaScript of a predicate: is an element matching sel,
// whose text contains text, inside the viewport (every corner)?
func onScreen(sel, text string) string {
	return fmt.Sprintf(`[...document.querySelectorAll(%q)].some((e) => {
  if (!e.textContent.includes(%q)) return false
  const r = e.getBoundingClientRect()
  return r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= window.innerWidth && r.bottom <= window.innerHeight
})`, sel, text)
}

// requireOnScreen checks, in the page open in ctx, each selector/text pair.
func requireOnScreen(t *testing.T, ctx context.Context, what string, pairs ...[2]string) {
	t.Helper()
	for _, p := range pairs {
		ok := eval[bool](t, ctx, onScreen(p[0], p[1]))
		require.True(t, ok, "%s: %s containing %q is not on the first screen", what, p[0], p[1])
	}
}

// Verdict colours: the background of the verdict box of each report
// (modelcheck's #verdict, lincheck's #lincheck-verdict).
var (
	verdictViolated = color.RGBA{0xfd, 0xe2, 0xe2, 0xff}
	verdictOK       = color.RGBA{0xe3, 0xf6, 0xea, 0xff}
)

// screenshot takes the screenshots a person would of the page at path,
// open in ctx: the full page as chromedp sees it once loaded, saved as
// name.png, and the first paint of `chromium --headless --screenshot`
// (the command a newcomer runs; a page that scrolls while it loads came
// out blank there). Each must show the verdict: its box, in the colour
// of the verdict, across the top of the page, and the page not blank.
func screenshot(t *testing.T, ctx context.Context, path, name string, verdict color.RGBA) {
	t.Helper()
	dir := os.Getenv("DRAINPROOF_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	requireVerdictPainted(t, full, verdict, name+" (full page)")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	out := filepath.Join(dir, name+".png")
	require.NoError(t, os.WriteFile(out, full, 0o644))
	t.Logf("screenshot: %s", out)

	first := firstPaint(t, path)
	requireVerdictPainted(t, first, verdict, name+" (chromium --headless --screenshot)")
}

// firstPaint runs `chromium --headless --screenshot` on the page at path,
// at 1400×900, and returns the PNG.
func firstPaint(t *testing.T, path string) []byte {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	tmp := t.TempDir()
	shot := filepath.Join(tmp, "first-paint.png")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath(t), "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+filepath.Join(tmp, "profile"),
		fmt.Sprintf("--window-size=%d,%d", viewW, viewH), "--screenshot="+shot, "file://"+abs)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	b, err := os.ReadFile(shot)
	require.NoError(t, err)
	return b
}

// requireVerdictPainted decodes a PNG and requires the verdict box to be
// painted in its colour in the top third of the page (at least a band of
// it across half the width), and the page not blank: some of it dark
// (text, lines).
func requireVerdictPainted(t *testing.T, shot []byte, verdict color.RGBA, what string) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	require.NoError(t, err, what)
	b := img.Bounds()
	inVerdict, dark := 0, 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if y < b.Min.Y+b.Dy()/3 && uint8(r>>8) == verdict.R && uint8(g>>8) == verdict.G && uint8(bl>>8) == verdict.B {
				inVerdict++
			}
			if r>>8 < 128 && g>>8 < 128 && bl>>8 < 128 {
				dark++
			}
		}
	}
	require.Greater(t, inVerdict, 10*b.Dx()/2, "%s: the verdict's box (%v) is not painted at the top", what, verdict)
	require.Greater(t, dark, b.Dx()*b.Dy()/500, "%s: the page is blank", what)
}

func open(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	abs, err := filepath.Abs(path)
	require.NoError(t, err)
	for _, a := range []chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(viewW, viewH), chromedp.Navigate("file://" + abs),
		chromedp.WaitReady(chromedp.CSS("body")), chromedp.Sleep(300 * time.Millisecond)} {
		_, err := chromedp.Run(ctx, a)
		require.NoError(t, err)
	}
}

// openCounterexample checks the model of cfg (in tla/) with one worker,
// so that the counterexample is always the same, opens its report, and
// returns the run's JSON report, whose figures the page must show, and
// the page's path.
func openCounterexample(t *testing.T, ctx context.Context, cfg string) (report, string) {
	t.Helper()
	page := filepath.Join(t.TempDir(), "report.html")
	code, out, errOut := runCLI(t, "check", "--config", "../../tla/"+cfg, "--html", page, "--progress", "0", "--workers", "1", "--json")
	require.Equal(t, exitViolation, code, errOut)
	open(t, ctx, page)
	r := decodeReport(t, out, "check")
	require.NotEmpty(t, r.Trace)
	return r, page
}

// eval evaluates a JavaScript expression in the page open in ctx.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

// The counterexample of Variant H: the violated property, its definition,
// the step where it fails and the variables it reads are on the first
// screen; the step column stays in view when the table scrolls sideways;
// the unchanged columns come back at a click.
func TestBrowserCounterexample(t *testing.T) {
	ctx := browser(t)
	r, page := openCounterexample(t, ctx, "MCDrainRegistrationVariantH.cfg")
	last := r.Trace[len(r.Trace)-1].Label
	requireOnScreen(t, ctx, "Variant H",
		[2]string{"h1", "DrainSafety violated"},
		[2]string{"#fails", fmt.Sprintf("DrainSafety fails at step %d: %s", r.Steps, last)},
		[2]string{"tr.last td.step", last}, // the failing step itself
		[2]string{"#definition", "DrainSafety == DrainSafetyClosed /\\ DrainSafetyEmpty"},
	)
	// The variables DrainSafety reads come first, highlighted.
	_, reads, ok := tla.Property("DrainSafety")
	require.True(t, ok)
	for _, v := range reads[:min(3, len(reads))] {
		requireOnScreen(t, ctx, "Variant H", [2]string{"th.focus", v})
	}
	screenshot(t, ctx, page, "counterexample", verdictViolated)

	// Scrolled far to the right, the step names stay on screen.
	left := eval[float64](t, ctx, `document.getElementById('scroller').scrollLeft = 5000; document.querySelector('#trace tr.last td.step').getBoundingClientRect().left`)
	require.Less(t, left, 120.0, "the step column is sticky")
	requireOnScreen(t, ctx, "scrolled", [2]string{"tr.last td.step", last})

	// The unchanged columns are collapsed, and shown at a click.
	const visibleConst = `[...document.querySelectorAll('th[data-const]')].filter((e) => e.offsetWidth > 0).length`
	hidden := eval[int](t, ctx, `document.getElementById('scroller').scrollLeft = 0; `+visibleConst)
	_, err := chromedp.Run(ctx, chromedp.Click(chromedp.CSS("#toggle")))
	require.NoError(t, err)
	shown := eval[int](t, ctx, visibleConst)
	require.Zero(t, hidden)
	require.Positive(t, shown)
}

// The liveness counterexample: the loop and its marker are on the first
// screen.
func TestBrowserLasso(t *testing.T) {
	ctx := browser(t)
	r, page := openCounterexample(t, ctx, "MCDrainRegistrationBugDoubleIncrementLive.cfg")
	require.NotNil(t, r.LoopStart)
	requireOnScreen(t, ctx, "lasso",
		[2]string{"h1", "DrainCompletes violated"},
		[2]string{"#loopnote", fmt.Sprintf("steps %d–%d", *r.LoopStart+2, r.Steps+1)},
		[2]string{"tr.back td.step", r.LoopBack.Label}, // the step that closes the loop
		[2]string{"#definition", "DrainCompletes == TRUE ~> DrainReported"},
		[2]string{"tr.loop td.step", "↻"},
	)
	screenshot(t, ctx, page, "lasso", verdictViolated)
}

// The lincheck report of a long history with one wrong answer in a late
// partition: the page holds that partition, opens at the failing
// operation, and says which it is and what the model expected.
func TestBrowserLincheck(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	saved := filepath.Join(dir, "h.json")
	code, _, errOut := runCLI(t, "lincheck", "--clients", "8", "--ops", "2000", "--seed", "1", "--save", saved)
	require.Equal(t, exitOK, code, errOut)
	// Make one report of the second half lie about the count.
	var h map[string]any
	b, err := os.ReadFile(saved)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &h))
	ops := h["ops"].([]any)
	lied := -1
	for i := len(ops) / 2; i < len(ops); i++ {
		op := ops[i].(map[string]any)
		if op["kind"] == "report" {
			op["count"] = 99
			lied = i
			break
		}
	}
	require.Positive(t, lied)
	b, err = json.Marshal(h)
	require.NoError(t, err)
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, b, 0o644))
	page := filepath.Join(dir, "lincheck.html")
	code, out, errOut := runCLI(t, "lincheck", "--history", bad, "--html", page)
	require.Equal(t, exitViolation, code, errOut)
	require.Contains(t, out, "first illegal operation")
	require.Contains(t, out, "Report() → (99,")

	open(t, ctx, page)
	requireOnScreen(t, ctx, "lincheck",
		[2]string{"#lincheck-verdict", "NOT linearizable"},
		[2]string{"#lincheck-verdict", "Report() → (99,"},
		[2]string{"#lincheck-verdict", "the model expected the state"},
	)
	errorOnScreen := eval[bool](t, ctx, `(() => {
  const p = [...document.querySelectorAll('line.linearization-invalid.linearization-point')]
    .filter((e) => !e.parentElement.classList.contains('hidden'))
  if (p.length === 0) return false
  const r = p.sort((a, b) => a.x1.baseVal.value - b.x1.baseVal.value)[0].getBoundingClientRect()
  return r.left >= 0 && r.right <= window.innerWidth && r.top >= 0 && r.bottom <= window.innerHeight
})()`)
	require.True(t, errorOnScreen, "the page opens at the first illegal operation")
	screenshot(t, ctx, page, "lincheck-fail", verdictViolated)
}

// The lincheck report of a history that is linearizable says so at the
// top (it stated no verdict: only porcupine's diagram).
func TestBrowserLincheckPass(t *testing.T) {
	ctx := browser(t)
	page := filepath.Join(t.TempDir(), "lincheck.html")
	code, out, errOut := runCLI(t, "lincheck", "--clients", "8", "--ops", "2000", "--seed", "1", "--html", page)
	require.Equal(t, exitOK, code, errOut)
	require.Contains(t, out, "linearizable")
	open(t, ctx, page)
	requireOnScreen(t, ctx, "lincheck pass",
		[2]string{"#lincheck-verdict", "Linearizable."},
		[2]string{"#lincheck-verdict", "operations"},
	)
	screenshot(t, ctx, page, "lincheck-pass", verdictOK)
}

// The cluster timeline (checker cluster --html) of a recorded run: the
// verdict, every process's lane, the faults and the drains are on the
// first screen; a run with a violation shows it in red.
func TestBrowserClusterTimeline(t *testing.T) {
	ctx := browser(t)
	r := loadClusterRun(t)
	for _, c := range []struct {
		name       string
		violations []string
		verdict    color.RGBA
		text       string
	}{
		{"cluster-timeline", nil, verdictOK, "cluster PASS"},
		{"cluster-timeline-fail", []string{"drain of n2 (epoch 3) completed while dispatcher disp-t2 was registered"}, verdictViolated, "cluster FAIL"},
	} {
		r.Violations = c.violations
		page := filepath.Join(t.TempDir(), c.name+".html")
		f, err := os.Create(page)
		require.NoError(t, err)
		require.NoError(t, writeClusterHTML(f, []*cluster.Result{r}, "checker cluster --seed 1 --duration 8s"))
		require.NoError(t, f.Close())
		open(t, ctx, page)
		pairs := [][2]string{{"#verdict", c.text}, {".legend", "draining"}, {"text.mark.fault", "✕"}, {"text.mark.sigterm", "▶"},
			{"text.mark.done", "✔"}, {"text", "faults stop"}}
		for _, p := range r.Processes {
			pairs = append(pairs, [2]string{"text.lane-name", p})
		}
		if c.violations != nil {
			pairs = append(pairs, [2]string{"ul.violations li", "disp-t2 was registered"})
		}
		requireOnScreen(t, ctx, c.name, pairs...)
		screenshot(t, ctx, page, c.name, c.verdict)
	}
}
