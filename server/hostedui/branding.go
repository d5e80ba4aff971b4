package hostedui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"strconv"
)

// Branding is the partner's look of every hosted page ([branding] in the
// configuration): the name in the header and in the consent line, a logo
// served at BrandLogoPath, the accent colour (#rrggbb, validated by the
// configuration) and a support address in the footer. The zero value is
// complybox's own look.
type Branding struct {
	Name         string
	Logo         []byte // the image bytes; nil: no logo
	LogoType     string // its content type (image/png, image/svg+xml, …)
	Accent       string // #rrggbb; "" keeps the stylesheet's
	SupportEmail string
}

// Paths of the branding assets, fixed so the CSP's 'self' covers them.
const (
	BrandLogoPath = "/sdk-assets/brand-logo"
	brandCSSPath  = "/sdk-assets/brand.css"
)

// HasLogo reports whether a logo is configured.
func (b *Branding) HasLogo() bool { return b != nil && len(b.Logo) > 0 }

// CSS is the stylesheet that sets the accent colour, "" without one.
func (b *Branding) CSS() string {
	if b == nil || b.Accent == "" {
		return ""
	}
	return ":root,html.theme-dark{--accent:" + b.Accent + ";--accent-text:" + textOn(b.Accent) + "}\n"
}

// textOn is the text colour readable on the background #rrggbb: near
// black on a light colour, white on a dark one (WCAG relative luminance).
func textOn(hex string) string {
	if len(hex) != 7 {
		return "#ffffff"
	}
	lin := func(s string) float64 {
		v, err := strconv.ParseUint(s, 16, 8)
		if err != nil {
			return 0
		}
		c := float64(v) / 255
		if c <= 0.03928 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(hex[1:3]) + 0.7152*lin(hex[3:5]) + 0.0722*lin(hex[5:7])
	// Contrast with white (1.05/(l+.05)) against with near black #111.
	if 1.05/(l+0.05) >= (l+0.05)/0.0556 {
		return "#ffffff"
	}
	return "#111111"
}

// WithBranding sets the partner's branding of every hosted page.
func (ui *UI) WithBranding(b Branding) *UI {
	ui.brand = &b
	h := sha256.New()
	h.Write([]byte(ui.version))
	h.Write([]byte(b.CSS()))
	h.Write(b.Logo)
	ui.version = hex.EncodeToString(h.Sum(nil))[:12]
	return ui
}

// brandAsset serves the logo and the accent stylesheet; false for another
// name.
func (ui *UI) brandAsset(w http.ResponseWriter, r *http.Request, name string) bool {
	var body []byte
	var ct string
	switch "/sdk-assets/" + name {
	case BrandLogoPath:
		if !ui.brand.HasLogo() {
			return false
		}
		body, ct = ui.brand.Logo, ui.brand.LogoType
	case brandCSSPath:
		body, ct = []byte(ui.brand.CSS()), "text/css; charset=utf-8"
	default:
		return false
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Opened by itself as a document (an SVG logo is one), it runs and
	// loads nothing in this origin, the console's: a logo's script would.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox")
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.URL.Query().Get("v") == ui.version {
		w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	if r.Method != http.MethodHead {
		_, _ = bytes.NewReader(body).WriteTo(w)
	}
	return true
}
