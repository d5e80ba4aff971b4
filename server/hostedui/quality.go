package hostedui

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagequality"
)

// Image quality at upload ([image_quality]): every JPEG or PNG an
// applicant uploads is measured on the decoded image (package
// imagequality). A photo with a problem is stored all the same (vendors
// warn and let the applicant retake: a refusal would block someone whose
// only camera takes dim photos); the page stays on the step and says, in
// the page's language, what is wrong with which photo, with the upload
// form to retake it and a link to go on. The findings travel in the
// redirect's query (?quality=front:blurry,too_dark;back:glare), so no
// state is kept for them.

// qualityCodes are the problems the page words, in their order.
var qualityCodes = []string{imagequality.TooSmall, imagequality.TooDark, imagequality.Overexposed, imagequality.Glare, imagequality.Blurry}

// WithQuality sets the thresholds of the checks; the zero Thresholds (the
// default of New) checks nothing.
func (ui *UI) WithQuality(th imagequality.Thresholds) *UI {
	ui.quality = th
	return ui
}

// assess measures the upload's images and returns the query value naming
// each field's problems, "" when every image is fine (or checks are off),
// and the problems by field, which the store records with the upload for
// the console's findings.
func (ui *UI) assess(up store.SDKUpload) (string, map[string][]string) {
	if ui.quality == (imagequality.Thresholds{}) {
		return "", nil
	}
	found := map[string][]string{}
	var fields []string
	for _, f := range up.Files {
		rep, ok := ui.store.AssessImage(f.Data, ui.quality)
		if !ok || rep.OK() {
			continue
		}
		if _, seen := found[f.Field]; !seen {
			fields = append(fields, f.Field)
		}
		for _, p := range rep.Problems {
			if !slices.Contains(found[f.Field], p) {
				found[f.Field] = append(found[f.Field], p)
			}
		}
	}
	var parts []string
	for _, f := range fields {
		parts = append(parts, f+":"+strings.Join(found[f], ","))
	}
	return strings.Join(parts, ";"), found
}

// sdkQuality is one photo's problems in words.
type sdkQuality struct {
	Photo     string
	Sentences []string
}

// readQuality turns the query value back into words, dropping anything it
// does not know (the query is the applicant's to edit).
func (p *sdkPage) readQuality(v string) {
	if v == "" || len(v) > 500 {
		return
	}
	for _, part := range strings.Split(v, ";") {
		field, codes, ok := strings.Cut(part, ":")
		if !ok {
			continue
		}
		q := sdkQuality{Photo: p.photoName(field)}
		for _, c := range strings.Split(codes, ",") {
			if slices.Contains(qualityCodes, c) {
				q.Sentences = append(q.Sentences, p.T("quality."+c))
			}
		}
		if len(q.Sentences) > 0 {
			p.Quality = append(p.Quality, q)
		}
	}
}

// photoName names an upload field in words: the side of an identity
// document, a company document's type (as the step lists it), else the
// step's name.
func (p *sdkPage) photoName(field string) string {
	if doc, ok := strings.CutPrefix(field, "file."); ok && slices.Contains(p.State.CompanyRequiredDocuments, doc) {
		return p.docLabel(doc) // one the level asks for only: the query is the applicant's to edit
	}
	switch field {
	case "front":
		return p.T("doc.front")
	case "back":
		return p.T("doc.back")
	}
	return p.Heading()
}

// ContinueHref is where "continue anyway" leads: the next step.
func (p *sdkPage) ContinueHref() string {
	return "/sdk/" + url.PathEscape(p.Token) + "?step=" + url.QueryEscape(p.next(p.Step))
}

// qualityRedirect answers an upload with problems: 303 back to the step
// with the findings.
func (ui *UI) qualityRedirect(w http.ResponseWriter, r *http.Request, token, kind, findings string) {
	sdkHeaders(w)
	http.Redirect(w, r, "/sdk/"+url.PathEscape(token)+"?step="+url.QueryEscape(kind)+"&quality="+url.QueryEscape(findings), http.StatusSeeOther)
}
