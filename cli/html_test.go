package cli

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// maxReportBytes is the bound on report.html.
const maxReportBytes = 2 << 20

// externalRef matches anything in a page that would make a browser fetch: a script or
// stylesheet, a source or link attribute, a CSS url(), an import. (The SVG namespace
// attributes, xmlns="http://www.w3.org/…", name a namespace and fetch nothing.)
var externalRef = regexp.MustCompile(`(?i)<script|<link|<iframe|<img|\ssrc\s*=|\shref\s*=|url\(|@import`)

// checkHTMLReport checks a report page as a file: size, self-containment, the charts it must
// have (by the title each chart's SVG draws), and returns it.
func checkHTMLReport(t *testing.T, path string, charts ...string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) >= maxReportBytes {
		t.Errorf("%s is %d bytes, want < 2 MB", path, len(data))
	}
	if m := externalRef.Find(data); m != nil {
		t.Errorf("%s refers to an outside resource: %q", path, m)
	}
	page := string(data)
	if n := strings.Count(page, "<svg"); n < len(charts) {
		t.Errorf("%s has %d charts, want at least %d", path, n, len(charts))
	}
	for _, c := range charts {
		if !strings.Contains(page, ">"+c+"<") {
			t.Errorf("%s lacks the chart %q", path, c)
		}
	}
	return page
}

// chromiumHosts are the services Chromium itself calls while it runs (component updates,
// network time, account checks; Debian's Chromium 148 also probes www.google.com and
// android.clients.google.com at start-up), whatever page it shows: requests to them are the
// browser's, not the page's. Any other host means the page fetched something.
var chromiumHosts = map[string]bool{
	"update.googleapis.com": true, "clients2.google.com": true, "accounts.google.com": true,
	"clients1.google.com": true, "redirector.gvt1.com": true, "optimizationguide-pa.googleapis.com": true,
	"content-autofill.googleapis.com": true, "safebrowsing.googleapis.com": true,
	"www.google.com": true, "android.clients.google.com": true,
}

// renderPNG renders a page with headless Chromium (Debian's chromium) into a PNG, through a
// proxy on loopback that records every request the browser makes, and returns the hosts the
// page itself requested. It skips when chromium is absent, except in CI, which installs it.
func renderPNG(t *testing.T, page, pngPath string) []string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chromium not installed; .ci/run installs it")
		}
		t.Skip("chromium not installed (apt-get install chromium); the HTML checks above ran")
	}
	var mu sync.Mutex
	var hosts []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !chromiumHosts[host] {
			mu.Lock()
			hosts = append(hosts, host)
			mu.Unlock()
		}
		http.Error(w, "no network for reports", http.StatusForbidden)
	}))
	defer proxy.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	abs, err := filepath.Abs(page)
	if err != nil {
		t.Fatal(err)
	}
	// --disable-dev-shm-usage: Debian's launcher adds it only when its own /dev/shm probe works,
	// and on some CI machines that probe fails (two mounts), leaving a large page's shared
	// images in a /dev/shm that may be small. A browser that still dies by a signal is the
	// browser's crash, not the report's: it is retried twice, fresh profile each time.
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
			"--user-data-dir="+t.TempDir(), "--proxy-server="+proxy.URL, "--proxy-bypass-list=<-loopback>",
			"--window-size=1200,5000", "--hide-scrollbars", "--screenshot="+pngPath, "file://"+abs)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			break
		}
		var exit *exec.ExitError
		if errors.As(err, &exit) && attempt < 3 && ctx.Err() == nil {
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				t.Logf("chromium died by %v (attempt %d), retrying:\n%s", ws.Signal(), attempt, stderr.String())
				continue
			}
		}
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	mu.Lock()
	defer mu.Unlock()
	return hosts
}

// shoot renders a report page to PNG with Chromium, checks that the page made no request,
// keeps a copy under $ROUTERLAB_SCREENSHOT_DIR when it is set, and returns the picture.
func shoot(t *testing.T, page, pngPath string) image.Image {
	t.Helper()
	if hosts := renderPNG(t, page, pngPath); len(hosts) > 0 {
		t.Errorf("rendering %s requested %v", page, hosts)
	}
	data, err := os.ReadFile(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("ROUTERLAB_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, filepath.Base(pngPath)), data, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// screenshot shoots a report page and checks that the picture has charts on it (a good share
// is not background white).
func screenshot(t *testing.T, page, pngPath string) {
	t.Helper()
	if share := inkShare(shoot(t, page, pngPath)); share < 0.05 {
		t.Errorf("screenshot %s is %.1f %% ink: the page looks empty", pngPath, 100*share)
	}
}

// inkShare is the share of a picture's pixels (every fourth in each direction) that are not
// background white.
func inkShare(img image.Image) float64 {
	b := img.Bounds()
	ink := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			if r, g, bl, _ := img.At(x, y).RGBA(); r < 0xe000 || g < 0xe000 || bl < 0xe000 {
				ink++
			}
		}
	}
	return float64(ink) / float64(b.Dx()*b.Dy()/16)
}

// The request check can fail: a page with one outside image is caught.
func TestScreenshotCatchesRequests(t *testing.T) {
	page := filepath.Join(t.TempDir(), "leak.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><p>x</p><img src="http://report-leak.invalid/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	hosts := renderPNG(t, page, filepath.Join(t.TempDir(), "leak.png"))
	if !slices.Contains(hosts, "report-leak.invalid") {
		t.Fatalf("the proxy saw %v, not the page's image request", hosts)
	}
}

// The acceptance: sweep --out D writes D/report.html with the charts, self-contained,
// under 2 MB, and Chromium renders it without a network request.
func TestSweepReportHTML(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"--requests", "300", "--set", "router_temperature=[0.0]", "--set", "overlap_score_credit=[0.0, 1.0]",
		"--set", "validate.requests=1500", "--set", "goal.sla.ttft_ms=300", "--set", "goal.sla.tpot_ms=15",
		"--out", dir, "--plots", "png"}
	if _, stderr, err := runSweepCmd(t, args...); err != nil {
		t.Fatalf("sweep: %v\n%s", err, stderr)
	}
	page := checkHTMLReport(t, filepath.Join(dir, "report.html"),
		"Search convergence", "prefill_load_scale saturation", "Validation on 1500 requests",
		"TTFT distribution", "TPOT distribution", "e2e latency distribution",
		"best: active KV blocks per worker", "best: prefix-hit ratio per worker",
		"round_robin: active KV blocks per worker", "default_kv: prefix-hit ratio per worker")
	for _, want := range []string{"Experiment", "workload.trace_digest", "95 % interval", "SLO met", "goodput req/s", "bootstrap interval",
		"it does not start at 0", "as the bar at the right reads", ">active KV blocks<", ">prefix-hit ratio<"} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, name := range []string{"convergence", "saturation", "validation", "cdf-ttft", "cdf-tpot", "cdf-e2e", "load-best", "prefix-hit-default_kv"} {
		if _, err := os.Stat(filepath.Join(dir, "plots", name+".png")); err != nil {
			t.Errorf("--plots png: %v", err)
		}
	}
	screenshot(t, filepath.Join(dir, "report.html"), filepath.Join(t.TempDir(), "sweep-report.png"))
}
