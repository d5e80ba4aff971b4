// Package hostedui is the hosted verification UI (SPEC §3.8). Pages are
// rendered on the server and work without JavaScript: every step is a plain
// form that posts to /sdk/{token}/… and is answered with a redirect (303) to
// the page, or the page again with the error. app.js only adds camera
// capture, the guided liveness capture and polling while the verdict is
// pending. The page's JSON API under /api/v1/sdk/ takes the same token as a
// Bearer credential. Both reach the store through the same SDK* methods.
// Short links (/l/{code}) lead to the pages. It never imports package
// server: errors and JSON go through package wire.
package hostedui

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagequality"
)

//go:embed templates/*.html static/*
var sdkFiles embed.FS

// sdkCSP is the Content-Security-Policy of every hosted-UI page: only our
// own script and style, camera frames as blob: images, forms posting here.
const sdkCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"media-src 'self' blob: mediastream:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// UI serves the hosted UI's pages, form posts, assets, short links and
// page API.
type UI struct {
	store    *store.Store
	log      *slog.Logger
	pages    *template.Template
	messages map[string]map[string]string
	version  string    // hash of the assets, for cache busting
	brand    *Branding // never nil: the zero Branding without [branding]
	// countries are the country pickers' options by language (read only).
	countries map[string][]sdkOption
	quality   imagequality.Thresholds // the zero value: no check
}

// New parses the embedded templates. Internal errors are logged to log.
func New(st *store.Store, log *slog.Logger) *UI {
	ui := &UI{store: st, log: log, messages: sdkMessages(), brand: &Branding{},
		countries: map[string][]sdkOption{"en": countryOptions("en"), "de": countryOptions("de")}}
	ui.pages = template.Must(template.New("sdk").ParseFS(sdkFiles, "templates/*.html"))
	h := sha256.New()
	names, _ := fs.Glob(sdkFiles, "static/*")
	for _, n := range names {
		b, _ := sdkFiles.ReadFile(n)
		h.Write(b)
	}
	ui.version = hex.EncodeToString(h.Sum(nil))[:12]
	return ui
}

// sdkHeaders sets the security headers of every hosted-UI page: the token
// is in the URL, so nothing may leak it (no Referer, no caching, no framing).
func sdkHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Security-Policy", sdkCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	h.Set("Permissions-Policy", "camera=(self), microphone=(), geolocation=()")
}

// writeError answers err as the API does (package wire).
func (ui *UI) writeError(w http.ResponseWriter, r *http.Request, err error) {
	wire.Error(w, r, ui.log, err)
}

// encode writes v as JSON with status.
func (ui *UI) encode(w http.ResponseWriter, status int, v any) {
	wire.JSON(w, ui.log, status, v)
}

func (ui *UI) write(w http.ResponseWriter, r *http.Request, name string, data any, status int) {
	var buf bytes.Buffer
	if err := ui.pages.ExecuteTemplate(&buf, name, data); err != nil {
		ui.writeError(w, r, fmt.Errorf("render %s: %w", name, err))
		return
	}
	sdkHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// sdkMessagePage is the data of the page for a link that is gone or unknown.
type sdkMessagePage struct {
	Lang, Theme, Version, Title, Text string
	Brand                             *Branding
	settled, erased                   bool // the session's applicant needs no new link, or can get none (store.SDKLook)
}

// fail answers a page request whose session cannot be used with the
// friendly page (SPEC §3.8): 410 for an expired or unknown session link,
// 404 for an unknown short link, in the session's language and theme when
// the link names one (else the browser's language). Other errors as the
// API would.
func (ui *UI) fail(w http.ResponseWriter, r *http.Request, err error) {
	page := ui.messagePage(r)
	p := &sdkPage{ui: ui, Lang: page.Lang}
	switch store.ErrorCode(err) {
	case store.EGONE:
		page.Title, page.Text = p.T("gone.title"), p.T("gone.text")
		switch {
		case page.settled:
			// The waiting page reloads into this one when its link
			// expires during the review: no new link is needed.
			page.Text = p.T("gone.settled.text")
		case page.erased:
			page.Text = p.T("closed.text") // no new link can be made
		}
		ui.write(w, r, "message", page, wire.Status(err))
	case store.EUNAUTHORIZED:
		ui.unknownLink(w, r)
	case store.ENOTFOUND:
		page.Title, page.Text = p.T("notfound.title"), p.T("notfound.text")
		ui.write(w, r, "message", page, wire.Status(err))
	default:
		ui.writeError(w, r, err)
	}
}

// unknownLink answers the page of a token or short code the store does not
// know: 410 (SPEC §3.8), "link not found". A short link's code is unknown
// too once retention has removed the link, a day after it expired, and it
// must still answer 410 (SPEC §3.4).
func (ui *UI) unknownLink(w http.ResponseWriter, r *http.Request) {
	page := ui.messagePage(r)
	p := &sdkPage{ui: ui, Lang: page.Lang}
	page.Title, page.Text = p.T("notfound.title"), p.T("notfound.text")
	ui.write(w, r, "message", page, http.StatusGone)
}

// messagePage is the look of the page for a link that is gone: the
// language and theme of the session that the path's token or short code
// names, else the browser's language, light.
func (ui *UI) messagePage(r *http.Request) sdkMessagePage {
	page := sdkMessagePage{Lang: "en", Theme: "light", Version: ui.version, Brand: ui.brand}
	if al := strings.ToLower(r.Header.Get("Accept-Language")); strings.HasPrefix(al, "de") {
		page.Lang = "de"
	}
	var token, code string
	if rest, ok := strings.CutPrefix(r.URL.Path, "/sdk/"); ok {
		token, _, _ = strings.Cut(rest, "/")
	} else if rest, ok := strings.CutPrefix(r.URL.Path, "/l/"); ok {
		code = rest
	}
	if token == "" && code == "" {
		return page
	}
	look, ok, err := ui.store.SDKLinkLook(token, code)
	if err != nil || !ok {
		return page
	}
	page.Lang, page.settled, page.erased = sdkLang(look.Lang), look.Settled, look.Erased
	if look.Theme == "dark" {
		page.Theme = "dark"
	}
	return page
}

// Asset serves the hosted UI's embedded static files and the configured
// branding logo.
func (ui *UI) Asset(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	name := path.Clean(strings.TrimPrefix(ps.ByName("file"), "/"))
	if ui.brandAsset(w, r, name) {
		return
	}
	b, err := sdkFiles.ReadFile("static/" + name)
	if err != nil || strings.Contains(name, "/") {
		ui.writeError(w, r, store.Errorf(store.ENOTFOUND, "asset_not_found", "no asset %q", name))
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.URL.Query().Get("v") == ui.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Header().Set("ETag", `"`+ui.version+`"`)
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(b))
}
