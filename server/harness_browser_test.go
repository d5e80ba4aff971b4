package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The browser tests drive Debian's Chromium through the DevTools protocol
// (chromedp). Each test starts its own headless Chromium with a fresh
// profile, fails on any console error, uncaught exception or failed request,
// and runs axe-core on every page it checks, failing on a critical or
// serious violation.
//
// Environment:
//   - COMPLYBOX_CHROMIUM: the browser binary (default /usr/bin/chromium, then
//     chromium or chromium-browser on PATH).
//   - COMPLYBOX_AXE_CORE: axe.min.js of the npm package axe-core (.ci/run
//     installs the pinned version and sets it).
//   - COMPLYBOX_SCREENSHOTS: a directory to write the screenshots to (the
//     README's come from `COMPLYBOX_SCREENSHOTS=../testdata/screenshots`);
//     without it screenshots are taken but not kept.
//
// Without Chromium or axe-core the tests skip and say how to install them;
// under CI=true a skip is a failure.

// Viewports of the browser tests.
var (
	phone   = viewport{390, 844, true}
	desktop = viewport{1280, 800, false}
)

type viewport struct {
	W, H   int64
	Mobile bool
}

// tab is one Chromium tab on an instance: chromedp actions run in ctx.
type tab struct {
	t   *testing.T
	in  *instance
	ctx context.Context
	axe string // axe-core's source

	mu    sync.Mutex
	errs  []string // console errors, exceptions and failed requests
	allow []string // substrings of errors the test expects
}

// browserPaths finds Chromium and axe-core, or skips (fails under CI).
func browserPaths(t *testing.T) (chromium, axe string) {
	t.Helper()
	skip := func(msg string) {
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + " (CI=true: the browser tests must run)")
		}
		t.Skip(msg)
	}
	chromium = os.Getenv("COMPLYBOX_CHROMIUM")
	if chromium == "" {
		for _, c := range []string{"/usr/bin/chromium", "chromium", "chromium-browser"} {
			if p, err := exec.LookPath(c); err == nil {
				chromium = p
				break
			}
		}
	}
	if chromium == "" {
		skip("browser test needs Chromium: apt-get install -y chromium (or set COMPLYBOX_CHROMIUM)")
	}
	axe = os.Getenv("COMPLYBOX_AXE_CORE")
	if axe == "" {
		skip("browser test needs axe-core: npm install --prefix /tmp/axe axe-core@4.11.0 and set COMPLYBOX_AXE_CORE=/tmp/axe/node_modules/axe-core/axe.min.js (.ci/run does)")
	}
	return chromium, axe
}

// chrome starts a headless Chromium for the test with viewport vp and
// returns its first tab. The fake media stream answers getUserMedia with a
// test pattern, so camera steps run.
func (in *instance) chrome(t *testing.T, vp viewport) *tab {
	t.Helper()
	chromium, axePath := browserPaths(t)
	src, err := os.ReadFile(axePath)
	if err != nil {
		t.Fatalf("read axe-core: %v", err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("use-fake-ui-for-media-stream", true),
		chromedp.Flag("use-fake-device-for-media-stream", true),
		chromedp.WindowSize(int(vp.W), int(vp.H)),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb := &tab{t: t, in: in, axe: string(src)}
	ctx, cancelTab := chromedp.NewContext(actx, chromedp.WithListener(tb.listen))
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	tb.ctx = ctx
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
				return err
			}
			if _, err := cdp.Call(ctx, tg, log.Enable, cdp.Empty{}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, runtime.Enable, cdp.Empty{})
			return err
		}),
		chromedp.EmulateViewport(vp.W, vp.H, func(p *emulation.SetDeviceMetricsOverrideParams, s *emulation.SetTouchEmulationEnabledParams) {
			p.Mobile = vp.Mobile
			s.Enabled = vp.Mobile
		})); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(tb.check)
	return tb
}

// listen records what a test must not see: console errors, uncaught
// exceptions, log errors (blocked by CSP, 4xx/5xx subresources) and failed
// requests. Requests the page itself cancels (a navigation that ends a
// poll) are not failures.
func (tb *tab) listen(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			tb.errs = append(tb.errs, "console."+string(e.Type)+": "+strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
		tb.errs = append(tb.errs, "exception: "+msg)
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			tb.errs = append(tb.errs, fmt.Sprintf("log %s: %s %s", e.Entry.Source, e.Entry.Text, e.Entry.URL))
		}
	case *network.EventLoadingFailed:
		if !e.Canceled {
			tb.errs = append(tb.errs, fmt.Sprintf("request failed: %s %s", e.ErrorText, e.BlockedReason))
		}
	case *network.EventResponseReceived:
		if os.Getenv("COMPLYBOX_BROWSER_DEBUG") != "" { // every response, when a test needs a look
			fmt.Println("response", e.Response.Status, e.Response.URL)
		}
	}
}

// expectError allows an error containing s (e.g. the 410 of an expired
// link's page, which Chromium logs).
func (tb *tab) expectError(s string) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.allow = append(tb.allow, s)
}

// check fails the test on any error that was not expected.
func (tb *tab) check() {
	tb.t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, e := range tb.errs {
		expected := false
		for _, a := range tb.allow {
			expected = expected || strings.Contains(e, a)
		}
		if !expected {
			tb.t.Errorf("browser: %s", e)
		}
	}
	tb.errs = nil
}

// actionTimeout bounds one step in the browser, so a page that never comes
// fails the test instead of hanging it.
const actionTimeout = 30 * time.Second

// run runs actions in the tab, failing the test on error.
func (tb *tab) run(actions ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		tb.t.Fatalf("browser: %v (at %s)", err, tb.location())
	}
}

// value runs action in tb and returns its value, failing the test on error.
func value[T any](tb *tab, action chromedp.Action[T]) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, actionTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		tb.t.Fatalf("browser: %v (at %s)", err, tb.location())
	}
	return v
}

// eval evaluates the JavaScript expression js and returns its value.
func eval[T any](tb *tab, js string) T {
	tb.t.Helper()
	return value(tb, chromedp.Evaluate[T](js))
}

// location is the tab's URL, for failure messages.
func (tb *tab) location() string {
	ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
	defer cancel()
	u, _ := chromedp.Run(ctx, chromedp.Location())
	return u
}

// open navigates to path on the instance (or an absolute URL) and waits
// for the body.
func (tb *tab) open(path string) {
	tb.t.Helper()
	u := path
	if strings.HasPrefix(path, "/") {
		u = tb.in.URL + path
	}
	tb.run(chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("body")))
}

// bodyText is the page's visible text.
func (tb *tab) bodyText() string {
	tb.t.Helper()
	return eval[string](tb, `document.body.innerText`)
}

// contains fails unless the page's visible text holds every one of want.
func (tb *tab) contains(want ...string) {
	tb.t.Helper()
	body := tb.bodyText()
	for _, w := range want {
		if !strings.Contains(body, w) {
			tb.t.Fatalf("page %s: no %q in:\n%s", tb.location(), w, body)
		}
	}
}

// lacks fails if the page's visible text holds any of bad.
func (tb *tab) lacks(bad ...string) {
	tb.t.Helper()
	body := tb.bodyText()
	for _, b := range bad {
		if strings.Contains(body, b) {
			tb.t.Fatalf("page %s: %q should not be shown:\n%s", tb.location(), b, body)
		}
	}
}

// click clicks the first visible element matching the CSS selector sel.
func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.run(chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible))
}

// submit clicks sel (a submit button or a link) and waits until the next
// document has loaded.
func (tb *tab) submit(sel string) {
	tb.t.Helper()
	before := eval[string](tb, `String(performance.timeOrigin)`)
	tb.click(sel)
	tb.waitNewDocument(before)
}

// waitNewDocument waits until the document whose timeOrigin was before
// was replaced and the new one is complete.
func (tb *tab) waitNewDocument(before string) {
	tb.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
		state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`String(performance.timeOrigin) + '|' + document.readyState`))
		cancel()
		origin, ready, _ := strings.Cut(state, "|")
		if err == nil && origin != before && ready == "complete" {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("no new page after the click (at %s)", tb.location())
		}
		time.Sleep(20 * time.Millisecond) // polls the browser, not the clock under test
	}
}

// waitFor waits until the CSS selector sel matches a visible element.
func (tb *tab) waitFor(sel string) {
	tb.t.Helper()
	tb.run(chromedp.WaitVisible(chromedp.CSS(sel)))
}

// upload sets the files of the file input sel.
func (tb *tab) upload(sel string, files ...string) {
	tb.t.Helper()
	tb.run(chromedp.SetUploadFiles(chromedp.CSS(sel), files))
}

// fill sets the value of the input sel.
// consoleLogin opens the console and logs in as operator name with the
// tests' console password.
func (tb *tab) consoleLogin(name string) {
	tb.open("/console")
	tb.fill("input[name=name]", name)
	tb.fill("input[name=password]", consolePassword)
	tb.submit("form[action='/console/login'] button[type=submit]")
}

func (tb *tab) fill(sel, v string) {
	tb.t.Helper()
	tb.run(chromedp.SetValue(chromedp.CSS(sel), v))
}

// file writes data to a temp file named name and returns its path.
func (tb *tab) file(name string, data []byte) string {
	tb.t.Helper()
	p := filepath.Join(tb.t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		tb.t.Fatal(err)
	}
	return p
}

// axeResult is the part of axe.run's result the tests read.
type axeResult struct {
	Violations []struct {
		ID, Impact, Help string
		Nodes            []struct {
			HTML string
		}
	}
}

// a11y runs axe-core (WCAG 2.1 A/AA and best practices) on the page and
// fails on any critical or serious violation; lesser ones are logged.
func (tb *tab) a11y() {
	tb.t.Helper()
	if !eval[bool](tb, `typeof window.axe === 'object'`) {
		eval[bool](tb, tb.axe+";true")
	}
	s := value(tb, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}, resultTypes: ['violations']}).then(r => JSON.stringify(r))`,
		chromedp.EvalAwaitPromise))
	var res axeResult
	if err := json.Unmarshal([]byte(s), &res); err != nil {
		tb.t.Fatalf("axe result: %v", err)
	}
	loc := tb.location()
	for _, v := range res.Violations {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, n.HTML)
		}
		msg := fmt.Sprintf("axe %s %s on %s: %s: %s", v.Impact, v.ID, loc, v.Help, strings.Join(where, " | "))
		if v.Impact == "critical" || v.Impact == "serious" {
			tb.t.Error(msg)
		} else {
			tb.t.Log(msg)
		}
	}
}

// shot takes a full-page screenshot; kept as name.png under
// $COMPLYBOX_SCREENSHOTS when set.
func (tb *tab) shot(name string) {
	tb.t.Helper()
	png := value(tb, chromedp.FullScreenshot(100))
	dir := os.Getenv("COMPLYBOX_SCREENSHOTS")
	if dir == "" {
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
}

// count is the number of elements matching the CSS selector sel.
func (tb *tab) count(sel string) int {
	tb.t.Helper()
	return eval[int](tb, fmt.Sprintf(`document.querySelectorAll(%q).length`, sel))
}

// servedAtPublicURL makes the instance listen on the address its
// public_url names, so the links it mints (short links, session URLs)
// lead a browser to it.
func servedAtPublicURL(t testing.TB) func(*options) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return func(o *options) {
		o.listener = ln
		o.settings.PublicURL = "http://" + ln.Addr().String()
	}
}

// chromedpRemove removes the elements matching the CSS selector sel.
func chromedpRemove(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelectorAll(%q).forEach(e => e.remove()), true`, sel))(ctx, t)
		return err
	})
}
