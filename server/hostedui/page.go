package hostedui

import (
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/complybox/complybox/store"
)

// sdkPage is what the page template renders.
type sdkPage struct {
	ui      *UI
	Lang    string
	Theme   string
	Token   string
	Version string
	Brand   *Branding
	Title   string
	State   store.SDKState
	Mode    string // intro, step, waiting, verdict, closed
	Step    string // the step shown in mode step
	// Requested is the step the intro's consent goes on to: the one asked
	// for in the address (a RETRY's "upload again" link), "" for the first
	// open one.
	Requested string
	Nav       []sdkNav
	Index     int // 1-based position of Step in Nav
	Err       *sdkError

	Fields      []sdkFieldView
	Questions   []sdkQuestionView
	CompanyDocs []sdkDocView
	Ubos        []sdkUboView
	UboForm     sdkUboForm
	Countries   []sdkOption  // the country picker's options in the page's language (shared: read only)
	Quality     []sdkQuality // the last upload's photo problems, in words
	IDDocTypes  []sdkOption  // the types the chosen issuing country issues (doccountry.go)
	DocType     string       // the identity document type chosen: posted, else uploaded before
	DocCountry  string       // the identity document's issuing country, "" until chosen
	// DocCountryGuess is the country the picker starts on.
	DocCountryGuess string
	Missing         []sdkNav
	Retry           []sdkNav
	Redirect        bool       // the verdict page goes on to returnUrl by itself
	Asks            []introAsk // the intro's list of what will be asked
	// ManualRefresh is the waiting view the applicant asked not to reload
	// itself (?refresh=off, WCAG 2.2.1): a "Check again" link instead of
	// the meta refresh, and no polling.
	ManualRefresh bool
}

type sdkNav struct {
	Key, Label      string
	Done, Current   bool
	Optional, Retry bool
	Labels          []string // a RETRY step's reject labels
	Comment         string   // a RETRY step's moderation comment
}

type sdkError struct {
	Title, Message string
}

type sdkOption struct {
	Value, Label string
	Selected     bool
}

type sdkFieldView struct {
	Name, Label, Value, Input, Autocomplete string
	Locked, Required, Invalid, Search       bool // Search: a long list app.js filters as one types
	Options                                 []sdkOption
}

type sdkQuestionView struct {
	ID, Name, Text, Type, Value string
	Required, Invalid           bool
	Options                     []sdkOption
}

// sdkUboView is a beneficial-owner row as the page lists it; Index and
// Enrollment (its uboIndex and enrollmentStatus) let app.js match it with
// the state's row.
type sdkUboView struct {
	FullName, Roles, OwnershipPercent, Status string
	Index                                     int
	Enrollment                                string
}

// sdkUboForm is the form that adds a row: empty, or what was posted when
// the page shows an error. Invalid is the field the error names.
type sdkUboForm struct {
	FullName, DateOfBirth, OwnershipPercent, Email, Nationality string
	Roles                                                       []sdkOption
	Invalid                                                     string
}

type sdkDocView struct {
	DocType, Label string
	Uploaded       bool
	Rejected       bool // uploaded, but the step was rejected with RETRY
}

// T returns the message key in the page's language.
func (p *sdkPage) T(key string) string {
	if m, ok := p.ui.messages[p.Lang][key]; ok {
		return m
	}
	if m, ok := p.ui.messages["en"][key]; ok {
		return m
	}
	return key
}

// Tf formats the message key with args.
func (p *sdkPage) Tf(key string, args ...any) string { return fmt.Sprintf(p.T(key), args...) }

// Ta returns the message key in the words for the page's applicant: for a
// company its variant key+".company" where there is one (the company is
// verified, not a person's identity), else key.
func (p *sdkPage) Ta(key string) string {
	if p.State.Applicant.Type == store.TypeCompany {
		if _, ok := p.ui.messages["en"][key+".company"]; ok {
			return p.T(key + ".company")
		}
	}
	return p.T(key)
}

// Taf formats the message key of Ta with args.
func (p *sdkPage) Taf(key string, args ...any) string { return fmt.Sprintf(p.Ta(key), args...) }

// Has reports whether a document of kind (and side, if given) was uploaded.
func (p *sdkPage) Has(kind, side string) bool {
	for _, d := range p.State.Documents {
		if d.Kind == kind && (side == "" || string(d.Side) == side) {
			return true
		}
	}
	return false
}

// ReturnHref is the href attribute of the way back to the partner: its
// returnUrl with externalUserId and reviewAnswer (see returnAttr).
func (p *sdkPage) ReturnHref() template.HTMLAttr {
	return template.HTMLAttr(`href="` + p.returnAttr() + `"`)
}

// charRef matches what follows an ampersand that would read as a character
// reference.
var charRef = regexp.MustCompile(`^&[A-Za-z0-9#]+;`)

// returnAttr is the redirect URL as a double-quoted attribute value. The
// URL is the partner's http(s) returnUrl; its query keeps plain "&"
// separators (valid HTML: no ampersand before a name and ";"), so the page
// shows the URL as the redirect uses it. Quotes, angle brackets and spaces
// are percent-encoded; anything that is not http(s) goes through /return.
func (p *sdkPage) returnAttr() string {
	u := string(p.State.RedirectURL)
	lower := strings.ToLower(u)
	if !strings.HasPrefix(lower, "https://") && !strings.HasPrefix(lower, "http://") {
		return "/sdk/" + url.PathEscape(p.Token) + "/return"
	}
	var b strings.Builder
	for i := 0; i < len(u); i++ {
		switch c := u[i]; {
		case c == '&' && charRef.MatchString(u[i:]):
			b.WriteString("&amp;")
		case c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' || c <= ' ' || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// StepRetry is the navigation entry of the current step when it was
// rejected with RETRY and waits for new data, else nil.
func (p *sdkPage) StepRetry() *sdkNav {
	for i := range p.Retry {
		if p.Retry[i].Key == p.Step {
			return &p.Retry[i]
		}
	}
	return nil
}

// Uploaded reports whether the document of kind (and side) is there and
// counts: uploaded, and its step is not waiting for a new upload after a
// RETRY.
func (p *sdkPage) Uploaded(kind, side string) bool {
	for _, n := range p.Retry {
		if n.Key == kind {
			return false
		}
	}
	return p.Has(kind, side)
}

// Done reports whether the step kind is done as the navigation marks it:
// it has its data, and none of it is asked for again (a RETRY). A step
// the navigation leaves out (automatic, or a questionnaire without
// questions) is done when it has its data.
func (p *sdkPage) Done(kind string) bool {
	for _, n := range p.Nav {
		if n.Key == kind {
			return n.Done && !n.Retry
		}
	}
	for _, s := range p.State.Steps {
		if s.Kind == kind {
			return s.HasData
		}
	}
	return false
}

// CompanyDocsDone counts the required company documents that are there.
func (p *sdkPage) CompanyDocsDone() int {
	n := 0
	for _, d := range p.CompanyDocs {
		if d.Uploaded {
			n++
		}
	}
	return n
}

// Heading is the title of the current step.
func (p *sdkPage) Heading() string { return p.stepLabel(p.Step) }

// Total is the number of steps in the navigation.
func (p *sdkPage) Total() int { return len(p.Nav) }

// stepLabel returns the label of a navigation key.
func (p *sdkPage) stepLabel(key string) string {
	if key == "personal" && p.State.Applicant.Type == store.TypeCompany {
		return p.T("step.company")
	}
	return p.T("step." + key)
}

// build lays out the page for state st: its mode, navigation and the step
// asked for (or the first one still open).
func (ui *UI) build(token string, st store.SDKState, requested string) *sdkPage {
	p := &sdkPage{ui: ui, Lang: sdkLang(st.Lang), Theme: st.Theme, Token: token, Version: ui.version, Brand: ui.brand, State: st}
	p.Countries = ui.countries[p.Lang]
	if p.Countries == nil {
		p.Countries = ui.countries["en"]
	}
	if p.Theme != "dark" {
		p.Theme = "light"
	}
	p.Title = p.T("title")
	if st.Applicant.Type == store.TypeCompany {
		p.Title = p.T("title.company")
	}
	missing := map[string]bool{}
	for _, k := range st.Missing {
		missing[k] = true
	}
	if len(st.Fields) > 0 {
		done := true
		for _, f := range st.Fields {
			if f.Required && f.Value == nil {
				done = false
			}
		}
		p.Nav = append(p.Nav, sdkNav{Key: "personal", Done: done})
		missing["personal"] = !done
	}
	for _, s := range st.Steps {
		if s.Automatic || (s.Kind == store.StepQuestionnaire && len(st.Questionnaire) == 0) {
			continue // nothing for the applicant to do
		}
		retry := s.ReviewAnswer == store.Red && s.ReviewRejectType == store.RejectRetry
		n := sdkNav{Key: s.Kind, Done: s.HasData && !missing[s.Kind], Optional: s.Optional, Retry: retry}
		if retry {
			n.Labels, n.Comment = s.RejectLabels, string(s.ModerationComment)
		}
		p.Nav = append(p.Nav, n)
	}
	if st.Applicant.Type == store.TypeCompany {
		// The beneficial-owner rows (SPEC §3.6); rows added here have
		// source sdk. Not required for submission.
		p.Nav = append(p.Nav, sdkNav{Key: "ubo", Done: len(st.Ubos) > 0, Optional: true})
	}
	p.Nav = append(p.Nav, sdkNav{Key: "review", Done: len(st.Missing) == 0 && st.Verdict != nil})
	for i := range p.Nav {
		n := &p.Nav[i]
		n.Label = p.stepLabel(n.Key)
		if missing[n.Key] {
			p.Missing = append(p.Missing, *n)
		}
		if n.Retry {
			p.Retry = append(p.Retry, *n)
		}
	}

	switch {
	case st.InReview && !(st.AcceptsData && len(p.Retry) > 0):
		// A company waiting for its owners whose own step the reviewer
		// asked for again takes it meanwhile: the step, not the wait.
		p.Mode = "waiting"
	case st.Verdict != nil && (st.Verdict.Final || requested == "" || !st.AcceptsData):
		p.Mode = "verdict"
		p.Redirect = st.Verdict.Final && st.RedirectURL != ""
	case !st.AcceptsData:
		p.Mode = "closed"
	default:
		p.Mode = "step"
	}
	if p.Mode == "step" && st.ConsentGivenAtUtc.IsZero() {
		p.Mode = "intro" // intro.go
		for _, n := range p.Nav {
			if n.Key == requested {
				p.Requested = requested
			}
		}
		p.fillIntro()
	}
	if p.WaitsForOwners() {
		p.fillUbos()
	}
	if p.Mode != "step" {
		return p
	}
	for _, n := range p.Nav {
		if n.Key == requested {
			p.Step = requested
		}
	}
	if p.Step == "" {
		p.Step = p.next("")
	}
	for i := range p.Nav {
		if p.Nav[i].Key == p.Step {
			p.Nav[i].Current, p.Index = true, i+1
		}
	}
	p.fill()
	return p
}

// next returns the step to show after step after ("" for the start): the
// first open step after it, else the first open step, else review. A fresh
// applicant starts with the personal data, even if the partner gave all of
// it, so they see what was given.
func (p *sdkPage) next(after string) string {
	if after == "" && len(p.Nav) > 0 && p.Nav[0].Key == "personal" {
		fresh := len(p.State.Documents) == 0
		for _, q := range p.State.Questionnaire {
			fresh = fresh && string(q.Answer) == "null"
		}
		if fresh {
			return "personal"
		}
	}
	start := 0
	for i, n := range p.Nav {
		if n.Key == after {
			start = i + 1
		}
	}
	for _, from := range []int{start, 0} {
		for _, n := range p.Nav[from:] {
			if !n.Done {
				return n.Key
			}
		}
	}
	return "review"
}

// fill prepares the forms of the current step.
func (p *sdkPage) fill() {
	st := p.State
	for _, f := range st.Fields {
		v := sdkFieldView{Name: f.Name, Label: p.T("field." + f.Name), Locked: f.Locked, Required: f.Required, Input: "text"}
		if f.Value != nil {
			v.Value = *f.Value
		}
		switch f.Name {
		case "dateOfBirth", "incorporationDate":
			v.Input = "date"
		case "email":
			v.Input, v.Autocomplete = "email", "email"
		case "phone":
			v.Input, v.Autocomplete = "tel", "tel"
		case "firstName":
			v.Autocomplete = "given-name"
		case "lastName":
			v.Autocomplete = "family-name"
		case "gender":
			v.Input = "select"
			for _, g := range []string{"male", "female", "other"} {
				v.Options = append(v.Options, sdkOption{Value: g, Label: p.T("gender." + g)})
			}
		case "nationality", "country":
			// Picked, not typed: the ISO alpha-3 code under the name in
			// the page's language; app.js adds a search box.
			v.Input, v.Search = "select", true
			v.Options = append([]sdkOption(nil), p.ui.countries[p.Lang]...)
			if v.Options == nil {
				v.Options = append([]sdkOption(nil), p.ui.countries["en"]...)
			}
		case "legalForm":
			v.Input = "select"
			for _, l := range store.LegalForms() {
				v.Options = append(v.Options, sdkOption{Value: l, Label: p.legalFormLabel(l)})
			}
		}
		p.Fields = append(p.Fields, v)
	}
	for _, q := range st.Questionnaire {
		v := sdkQuestionView{ID: q.ID, Name: "q." + q.ID, Text: q.Text, Type: q.Type, Required: q.Required}
		var s string
		var b bool
		switch {
		case json.Unmarshal(q.Answer, &s) == nil:
			v.Value = s
		case json.Unmarshal(q.Answer, &b) == nil:
			v.Value = fmt.Sprint(b)
		}
		for _, o := range q.Options {
			v.Options = append(v.Options, sdkOption{Value: o, Label: o})
		}
		p.Questions = append(p.Questions, v)
	}
	retry := !p.Uploaded(store.StepCompanyDocs, "") && p.Has(store.StepCompanyDocs, "")
	for _, d := range st.CompanyRequiredDocuments {
		has := p.hasDocType(d)
		p.CompanyDocs = append(p.CompanyDocs, sdkDocView{DocType: d, Label: p.docLabel(d), Uploaded: has && !retry, Rejected: has && retry})
	}
	p.fillDocCountry()
	p.fillUbos()
	p.UboForm = sdkUboForm{}
	for _, r := range store.UboRoles() {
		p.UboForm.Roles = append(p.UboForm.Roles, sdkOption{Value: r, Label: p.T("role." + r)})
	}
}

// legalFormLabel is how the page writes the legal form l: a word in the
// page's language, an abbreviation as the law writes it.
func (p *sdkPage) legalFormLabel(l string) string {
	switch l {
	case "partnership", "sole_proprietorship", "foundation", "trust", "other":
		return p.T("legal." + l)
	case "ltd":
		return "Ltd"
	case "gmbh":
		return "GmbH"
	case "inc", "corp":
		return strings.ToUpper(l[:1]) + l[1:] + "."
	}
	return strings.ToUpper(l)
}

// fillUbos lists the beneficial-owner rows with their states in words.
func (p *sdkPage) fillUbos() {
	for _, u := range p.State.Ubos {
		roles := make([]string, len(u.Roles))
		for i, r := range u.Roles {
			roles[i] = p.T("role." + r)
		}
		p.Ubos = append(p.Ubos, sdkUboView{FullName: u.FullName, Roles: strings.Join(roles, ", "),
			OwnershipPercent: strings.Replace(string(u.OwnershipPercent), ".", p.T("number.decimal"), 1), Status: p.T("enrollment." + u.EnrollmentStatus),
			Index: u.UboIndex, Enrollment: u.EnrollmentStatus})
	}
}

// WaitsForOwners reports whether the page waits for a company whose own
// steps were reviewed and whose verdict waits for its beneficial owners'
// verifications (SPEC §3.6: it closes when every child is terminal).
func (p *sdkPage) WaitsForOwners() bool { return p.Mode == "waiting" && p.State.OwnersOpen != nil }

// OwnersOpen counts the beneficial-owner rows whose verification has not
// reached a final verdict: not invited yet, in progress, to upload again
// or with an expired link. The state's ownersOpen, which app.js compares
// with the page's data-owners-open.
func (p *sdkPage) OwnersOpen() int {
	if p.State.OwnersOpen == nil {
		return 0
	}
	return *p.State.OwnersOpen
}

// uboPosted fills the row form with what was posted, for the page that
// shows its error.
func (p *sdkPage) uboPosted(posted url.Values, invalid string) {
	f := &p.UboForm
	f.FullName, f.DateOfBirth = posted.Get("fullName"), posted.Get("dateOfBirth")
	f.OwnershipPercent, f.Email, f.Nationality = posted.Get("ownershipPercent"), posted.Get("email"), posted.Get("nationality")
	for i := range f.Roles {
		f.Roles[i].Selected = slices.Contains(posted["roles"], f.Roles[i].Value)
	}
	f.Invalid, _, _ = strings.Cut(invalid, "[")
}

func (p *sdkPage) hasDocType(docType string) bool {
	for _, d := range p.State.Documents {
		if d.Kind == store.StepCompanyDocs && string(d.DocType) == docType {
			return true
		}
	}
	return false
}

// selected marks the options whose value is v.
func selected(opts []sdkOption, v string) {
	for i := range opts {
		opts[i].Selected = opts[i].Value == v
	}
}

// render writes the page with status.
func (ui *UI) render(w http.ResponseWriter, r *http.Request, p *sdkPage, status int) {
	for i := range p.Fields {
		selected(p.Fields[i].Options, p.Fields[i].Value)
	}
	for i := range p.Questions {
		selected(p.Questions[i].Options, p.Questions[i].Value)
	}
	ui.write(w, r, "page", p, status)
}
