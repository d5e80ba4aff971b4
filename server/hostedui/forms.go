package hostedui

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Pages and form posts: /sdk/{token}/….

// formError shows a failed form post: the page of step again with the
// error, with the status the API would answer.
func (ui *UI) formError(w http.ResponseWriter, r *http.Request, token, step string, err error, posted url.Values) {
	e := store.AsError(err)
	if e.Code == store.EGONE || e.Code == store.EUNAUTHORIZED || e.Code == store.EINTERNAL {
		ui.fail(w, r, err)
		return
	}
	st, verr := ui.store.SDKView(token)
	if verr != nil {
		ui.fail(w, r, verr)
		return
	}
	p := ui.build(token, st, step)
	p.Err = p.plainError(e)
	for i := range p.Fields {
		f := &p.Fields[i]
		f.Invalid = f.Name == e.Field
		if vs, ok := posted[f.Name]; ok && !f.Locked {
			f.Value = vs[0]
		}
	}
	if p.Step == "ubo" && posted != nil {
		p.uboPosted(posted, e.Field)
	}
	if p.Mode == "step" && posted != nil {
		p.readDocCountry(posted) // the upload form again, for the country posted
	}
	for i := range p.Questions {
		q := &p.Questions[i]
		q.Invalid = "questionnaire."+q.ID == e.Field
		if vs, ok := posted[q.Name]; ok {
			q.Value = vs[0]
		}
	}
	ui.render(w, r, p, wire.Status(err))
}

// done answers a successful form post of step with a redirect to the page:
// the next open step, or the page itself once it no longer shows steps.
func (ui *UI) done(w http.ResponseWriter, r *http.Request, token string, st store.SDKState, step string) {
	sdkHeaders(w)
	target := "/sdk/" + url.PathEscape(token)
	if p := ui.build(token, st, ""); p.Mode == "step" {
		next := p.next(step)
		for _, n := range p.Nav {
			if n.Key == step && !n.Done && step != "review" && step != "ubo" {
				next = step // still open (a company document is missing): stay
			}
		}
		target += "?step=" + url.QueryEscape(next)
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// Page renders GET /sdk/{token}?step=…. The waiting view reloads itself
// until the verdict is there; ?refresh=off turns that off.
func (ui *UI) Page(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return
	}
	p := ui.build(token, st, r.URL.Query().Get("step"))
	p.ManualRefresh = p.Mode == "waiting" && r.URL.Query().Get("refresh") == "off"
	if p.Mode == "step" {
		p.readQuality(r.URL.Query().Get("quality"))
		p.readDocCountry(r.URL.Query())
	}
	ui.render(w, r, p, http.StatusOK)
}

// Return sends the applicant back to the partner's returnUrl with
// externalUserId and reviewAnswer once there is a verdict; before, or
// without a returnUrl, back to the page.
func (ui *UI) Return(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return
	}
	sdkHeaders(w)
	if st.RedirectURL == "" {
		http.Redirect(w, r, "/sdk/"+url.PathEscape(token), http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, string(st.RedirectURL), http.StatusSeeOther)
}

// FormAddress answers a GET of a form's address (the address bar after a
// form came back with an error, then Enter, or a bookmark): the page
// itself, through a 303, instead of a bare 405. An unknown or expired
// token gets its page there.
func (ui *UI) FormAddress(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	sdkHeaders(w)
	http.Redirect(w, r, "/sdk/"+url.PathEscape(ps.ByName("token")), http.StatusSeeOther)
}

// openForm reads the session of token and parses the form posted for
// step. It answers the failure itself (the 410 page, or step's page with
// the error) and reports whether the caller goes on.
func (ui *UI) openForm(w http.ResponseWriter, r *http.Request, token, step string) (store.SDKState, bool) {
	st, err := ui.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return st, false
	}
	if step != "intro" && !consented(w, r, token, st) {
		return st, false
	}
	// The pages post these forms url-encoded; any other body would parse
	// as no fields at all and pass for an empty form.
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err := r.ParseForm(); err != nil || mt != "application/x-www-form-urlencoded" {
		if e := wire.TooLarge(err); e != nil {
			ui.formError(w, r, token, step, e, nil)
			return st, false
		}
		ui.formError(w, r, token, step, store.Invalid("body", "malformed form"), nil)
		return st, false
	}
	return st, true
}

// PostPersonalInfo takes the personal (or company) data form. An input
// left empty clears a value the applicant gave before.
func (ui *UI) PostPersonalInfo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, ok := ui.openForm(w, r, token, "personal")
	if !ok {
		return
	}
	in := map[string]json.RawMessage{}
	for _, f := range st.Fields {
		vs, ok := r.PostForm[f.Name]
		if !ok {
			continue
		}
		v := strings.TrimSpace(vs[0])
		if f.Name == "nationality" || f.Name == "country" {
			v = strings.ToUpper(v) // a person types "deu"
		}
		switch {
		case v != "":
			b, _ := json.Marshal(v)
			in[f.Name] = b
		case f.Value != nil:
			in[f.Name] = json.RawMessage("null")
		}
	}
	st, err := ui.store.SDKPersonalInfo(token, in)
	if err != nil {
		ui.formError(w, r, token, "personal", err, r.PostForm)
		return
	}
	ui.done(w, r, token, st, "personal")
}

// PostDocuments takes an upload form (multipart).
func (ui *UI) PostDocuments(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if !ui.consentGiven(w, r, token) {
		return
	}
	up, err := readUpload(r)
	if err == nil && up.Kind == store.StepIdentityDoc && up.Country == "" {
		// The page asks for the issuing country first (the page API
		// leaves it optional).
		err = store.Invalid("country", "country (the issuing country) is required")
	}
	var st store.SDKState
	var findings string
	if err == nil {
		findings, up.Quality = ui.assess(up)
		st, err = ui.store.SDKAddDocuments(token, up)
	}
	if err != nil {
		// Past the body limit too: the page again, with the error in words.
		var posted url.Values
		if up.Kind == store.StepIdentityDoc {
			posted = url.Values{"country": {up.Country}, "docType": {string(up.DocType)}}
		}
		ui.formError(w, r, token, up.Kind, err, posted)
		return
	}
	if findings != "" {
		ui.qualityRedirect(w, r, token, up.Kind, findings)
		return
	}
	ui.done(w, r, token, st, up.Kind)
}

// PostQuestionnaire takes the questionnaire form: inputs "q.<id>"; a
// boolean answer is "true" or "false"; an empty input is no answer.
func (ui *UI) PostQuestionnaire(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, ok := ui.openForm(w, r, token, "questionnaire")
	if !ok {
		return
	}
	// Answers are taken as typed, as the page API takes them: a choice is
	// its option exactly (an option may have spaces around it), a text
	// keeps its spaces and its line breaks, which a browser posts as CR LF
	// (HTML's form encoding) and which are stored as the \n typed. Only
	// an answer of spaces alone counts as none.
	answers := map[string]json.RawMessage{}
	for _, q := range st.Questionnaire {
		v := r.PostForm.Get("q." + q.ID)
		if strings.TrimSpace(v) == "" {
			continue
		}
		var b []byte
		switch {
		case q.Type == "boolean" && (v == "true" || v == "false"):
			b = []byte(v)
		case q.Type == "text":
			b, _ = json.Marshal(strings.ReplaceAll(v, "\r\n", "\n"))
		default:
			b, _ = json.Marshal(v)
		}
		answers[q.ID] = b
	}
	st, err := ui.store.SDKAnswers(token, answers)
	if err != nil {
		ui.formError(w, r, token, "questionnaire", err, r.PostForm)
		return
	}
	ui.done(w, r, token, st, "questionnaire")
}

// PostUbo takes the form that adds a beneficial-owner row (source sdk)
// and shows the rows again, so that another can be added.
func (ui *UI) PostUbo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if _, ok := ui.openForm(w, r, token, "ubo"); !ok {
		return
	}
	if _, err := ui.store.SDKAddUbo(token, uboFormInput(r.PostForm)); err != nil {
		ui.formError(w, r, token, "ubo", err, r.PostForm)
		return
	}
	sdkHeaders(w)
	http.Redirect(w, r, "/sdk/"+url.PathEscape(token)+"?step=ubo", http.StatusSeeOther)
}

// ownershipInput is a decimal as a person types it: digits, a point or a
// comma, then digits; a trailing % is allowed.
var ownershipInput = regexp.MustCompile(`^[0-9]{1,3}([.,][0-9]+)?$`)

// uboFormInput reads the row form as the JSON body of POST …/ubos: inputs
// left empty are absent, the checked roles an array, ownershipPercent a
// number when it reads as one (else a string, which the store rejects
// naming the field).
func uboFormInput(form url.Values) store.UboInput {
	in := store.UboInput{}
	str := func(v string) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	if vs, ok := form["fullName"]; ok {
		in["fullName"] = str(vs[0])
	}
	for _, f := range []string{"dateOfBirth", "email", "nationality"} {
		v := strings.TrimSpace(form.Get(f))
		if f == "nationality" {
			v = strings.ToUpper(v)
		}
		if v != "" {
			in[f] = str(v)
		}
	}
	if v := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(form.Get("ownershipPercent")), "%")); v != "" {
		if ownershipInput.MatchString(v) {
			in["ownershipPercent"] = json.RawMessage(strings.Replace(v, ",", ".", 1))
		} else {
			in["ownershipPercent"] = str(v)
		}
	}
	roles := form["roles"]
	if roles == nil {
		roles = []string{}
	}
	b, _ := json.Marshal(roles)
	in["roles"] = b
	return in
}

// PostSubmit sends the applicant to review; the page then waits for the
// verdict.
func (ui *UI) PostSubmit(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if !ui.consentGiven(w, r, token) {
		return
	}
	if err := ui.requiredFilled(token); err != nil {
		ui.formError(w, r, token, "review", err, nil)
		return
	}
	st, err := ui.store.SDKSubmit(token)
	if err != nil {
		ui.formError(w, r, token, "review", err, nil)
		return
	}
	ui.done(w, r, token, st, "review")
}

// requiredFilled holds the page's submit to the fields the page marks
// required (a person's names and date of birth where the level collects
// them), as it holds it to consent. The page API leaves both to the
// partner's own interface: the level itself requires no personal field
// (seed 2.5: an individual level enables fields; only a company level
// requires some, checked for every submission). Returns ECONFLICT
// missing_step_data naming the first field left empty.
func (ui *UI) requiredFilled(token string) error {
	st, err := ui.store.SDKView(token)
	if err != nil {
		return err
	}
	for _, f := range st.Fields {
		if f.Required && f.Value == nil {
			return &store.Error{Code: store.ECONFLICT, Reason: "missing_step_data", Field: f.Name,
				Message: "the page asks for " + f.Name + " before submission"}
		}
	}
	return nil
}

// asset serves the embedded stylesheet and script. With ?v= of the
// current assets the answer may be cached for good.
