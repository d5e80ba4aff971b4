package server_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/complybox/complybox/server/hostedui"
)

// TestHostedBranding: [branding] shows on every hosted page, the step
// pages and the friendly page of an unknown link alike: the name, the
// logo served at its fixed address, the accent colour as a stylesheet of
// our own (the CSP allows no inline style) and the support address.
func TestHostedBranding(t *testing.T) {
	t.Parallel()
	logo := []byte("\x89PNG\r\n\x1a\nlogo bytes")
	in := start(t, func(o *options) {
		o.branding = hostedui.Branding{Name: "Acme Bank", Logo: logo, LogoType: "image/png", Accent: "#ffcc00", SupportEmail: "help@acme.example"}
	})
	in.createApplicant("brand-1", "Brand")
	token := in.sdkSession("brand-1", nil)
	for _, path := range []string{"/sdk/" + token, "/l/nope", "/sdk/not-a-token"} {
		r := in.sdkGet(path)
		if r.Status != http.StatusOK && r.Status != http.StatusNotFound && r.Status != http.StatusGone {
			t.Fatalf("GET %s: %d", path, r.Status)
		}
		for _, want := range []string{`src="` + hostedui.BrandLogoPath, `alt="Acme Bank"`, `href="/sdk-assets/brand.css`, `href="mailto:help@acme.example"`} {
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("GET %s lacks %s", path, want)
			}
		}
	}
	r := in.sdkGet(hostedui.BrandLogoPath)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/png" || !bytes.Equal(r.Body, logo) {
		t.Fatalf("logo: %d %s %q", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	// Opened by itself, as a document, the logo runs nothing: an SVG logo's
	// script would run in the console's origin.
	if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("logo Content-Security-Policy %q, want a sandbox with nothing allowed", csp)
	}
	r = in.sdkGet("/sdk-assets/brand.css")
	// A light accent gets dark text on its buttons.
	if r.Status != 200 || !strings.Contains(string(r.Body), "--accent:#ffcc00") || !strings.Contains(string(r.Body), "--accent-text:#111111") ||
		!strings.HasPrefix(r.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("brand.css: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}

	// Without [branding]: none of it, and no logo to fetch.
	plain := start(t)
	plain.createApplicant("plain-1", "Plain")
	page := string(plain.sdkGet("/sdk/" + plain.sdkSession("plain-1", nil)).Body)
	if strings.Contains(page, "brand") || strings.Contains(page, "mailto:") {
		t.Fatal("a page without [branding] shows branding")
	}
	if r := plain.sdkGet(hostedui.BrandLogoPath); r.Status != http.StatusNotFound {
		t.Fatalf("logo without one: %d", r.Status)
	}
}
