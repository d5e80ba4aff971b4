package server

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagecheck"
)

// The hosted verification UI (SPEC §3.8). Pages are rendered on the server
// and work without JavaScript: every step is a plain form that posts to
// /sdk/{token}/… and is answered with a redirect (303) to the page, or the
// page again with the error. app.js only adds camera capture, the guided
// liveness capture and polling while the verdict is pending. The page's
// JSON API under /api/v1/sdk/ takes the same token as a Bearer credential.
// Both reach the store through the same SDK* methods.

//go:embed sdk/templates/*.html sdk/static/*
var sdkFiles embed.FS

// sdkCSP is the Content-Security-Policy of every hosted-UI page: only our
// own script and style, camera frames as blob: images, forms posting here.
const sdkCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"media-src 'self' blob: mediastream:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// sdkUI serves the hosted UI's pages, form posts and assets.
type sdkUI struct {
	s        *Server
	pages    *template.Template
	messages map[string]map[string]string
	version  string // hash of the assets, for cache busting
}

// newSDKUI parses the embedded templates.
func (s *Server) newSDKUI() *sdkUI {
	ui := &sdkUI{s: s, messages: sdkMessages()}
	ui.pages = template.Must(template.New("sdk").ParseFS(sdkFiles, "sdk/templates/*.html"))
	h := sha256.New()
	names, _ := fs.Glob(sdkFiles, "sdk/static/*")
	for _, n := range names {
		b, _ := sdkFiles.ReadFile(n)
		h.Write(b)
	}
	ui.version = hex.EncodeToString(h.Sum(nil))[:12]
	return ui
}

// redactPath hides the session token of hosted-UI paths, for logs.
func redactPath(p string) string {
	if rest, ok := strings.CutPrefix(p, "/sdk/"); ok {
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			return "/sdk/{token}" + rest[i:]
		}
		return "/sdk/{token}"
	}
	return p
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

// ---- The page API: /api/v1/sdk/* with Authorization: Bearer <token> ----

// sdkHandler is a page-API handler; token is the session token.
type sdkHandler func(w http.ResponseWriter, r *http.Request, token string) error

// sdkAPI wraps h with the Bearer token. An unknown, missing or expired token
// is 401 (an expired one with code session_expired).
func (s *Server) sdkAPI(h sdkHandler) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		token, err := bearerToken(r)
		if err == nil && r.Method != http.MethodGet {
			// The token is checked before the body is read: an unknown or
			// expired token is 401 whatever the body holds.
			_, err = s.store.SDKView(token)
		}
		if err == nil {
			err = h(w, r, token)
		}
		if err == nil {
			return
		}
		if e := store.AsError(err); e.Code == store.EGONE || e.Code == store.EUNAUTHORIZED {
			w.Header().Set("WWW-Authenticate", `Bearer realm="complybox-sdk"`)
			err = &store.Error{Code: store.EUNAUTHORIZED, Reason: e.Reason, Message: e.Message}
		}
		s.writeError(w, r, err)
	}
}

// bearerToken returns the token of "Authorization: Bearer <token>".
func bearerToken(r *http.Request) (string, error) {
	scheme, token, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", store.Errorf(store.EUNAUTHORIZED, "missing_token", "send the verification session token as Authorization: Bearer <token>")
	}
	return token, nil
}

// sdkShown sets the language and theme of a state to those the hosted UI
// uses: an unknown language is English, a theme other than dark light.
func sdkShown(st *store.SDKState) {
	st.Lang = sdkLang(st.Lang)
	if st.Theme != "dark" {
		st.Theme = "light"
	}
}

func (s *Server) sdkState(w http.ResponseWriter, r *http.Request, token string) error {
	st, err := s.store.SDKState(token)
	if err != nil {
		return err
	}
	sdkShown(&st)
	s.encode(w, http.StatusOK, st)
	return nil
}

func (s *Server) sdkPersonalInfo(w http.ResponseWriter, r *http.Request, token string) error {
	var in map[string]json.RawMessage
	if err := decode(r, &in); err != nil {
		return err
	}
	for _, wrap := range []string{"fields", "info"} {
		if inner, ok := in[wrap]; ok && len(in) == 1 && bytes.HasPrefix(bytes.TrimSpace(inner), []byte("{")) {
			// {"fields": {...}} or {"info": {...}} (as the applicant shows
			// them) is read as the fields themselves.
			in = nil
			if err := decodeBytes(inner, &in); err != nil {
				return err
			}
			break
		}
	}
	st, err := s.store.SDKPersonalInfo(token, in)
	if err != nil {
		return err
	}
	sdkShown(&st)
	s.encode(w, http.StatusOK, st)
	return nil
}

func (s *Server) sdkDocuments(w http.ResponseWriter, r *http.Request, token string) error {
	up, err := readUpload(r)
	if err != nil {
		return err
	}
	st, err := s.store.SDKAddDocuments(token, up)
	if err != nil {
		return err
	}
	sdkShown(&st)
	s.encode(w, http.StatusCreated, st)
	return nil
}

func (s *Server) sdkQuestionnaire(w http.ResponseWriter, r *http.Request, token string) error {
	var in map[string]json.RawMessage
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := s.store.SDKAnswers(token, in)
	if err != nil {
		return err
	}
	sdkShown(&st)
	s.encode(w, http.StatusOK, st)
	return nil
}

// sdkAddUbo appends a beneficial-owner row (source sdk) to the session's
// company: 201 with the state, the new row and its index.
func (s *Server) sdkAddUbo(w http.ResponseWriter, r *http.Request, token string) error {
	var in store.UboInput
	if err := decode(r, &in); err != nil {
		return err
	}
	out, err := s.store.SDKAddUbo(token, in)
	if err != nil {
		return err
	}
	sdkShown(&out.SDKState)
	s.encode(w, http.StatusCreated, out)
	return nil
}

func (s *Server) sdkSubmit(w http.ResponseWriter, r *http.Request, token string) error {
	st, err := s.store.SDKSubmit(token)
	if err != nil {
		return err
	}
	sdkShown(&st)
	s.encode(w, http.StatusOK, st)
	return nil
}

// readUpload reads a multipart upload: the fields kind (or type), side and
// docType (or idDocType) and the file parts "file" (one or more; "image" or
// any other name with a file name is the same), "front" and "back" (sides
// of an identity document). An empty file input (no name, no bytes) is
// skipped. A JSON body as POST …/documents takes it (kind, side,
// docType, image in base64) is accepted too. Returns EINVALID naming the
// field and ETOOLARGE past the body limit.
func readUpload(r *http.Request) (store.SDKUpload, error) {
	var up store.SDKUpload
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && mt == "application/json" {
		return readJSONUpload(r)
	}
	if err != nil || mt != "multipart/form-data" {
		return up, store.Invalid("Content-Type", "send the upload as multipart/form-data with the fields kind, side, docType and file")
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return up, store.Invalid("body", "malformed multipart body")
	}
	type filePart struct {
		name string
		data []byte
	}
	var files []filePart
	count := map[string]int{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return up, uploadError(err)
		}
		name := p.FormName()
		switch {
		case name == "idDocType":
			name = "docType" // the name POST …/verify uses
		case name == "type":
			name = "kind"
		case p.FileName() != "" && !slices.Contains([]string{"file", "image", "front", "back"}, name):
			name = "file" // a file under any other name
		}
		switch name {
		case "kind", "side", "docType":
			b, err := io.ReadAll(io.LimitReader(p, 256))
			if err != nil {
				return up, uploadError(err)
			}
			v := strings.TrimSpace(string(b))
			switch name {
			case "kind":
				if up.Kind == "" || p.FormName() == "kind" {
					up.Kind = v
				}
			case "side":
				up.Side = v
			default:
				up.DocType = v
			}
		case "file", "image", "front", "back":
			b, err := io.ReadAll(io.LimitReader(p, imagecheck.MaxBytes+1))
			if err != nil {
				return up, uploadError(err)
			}
			if p.FileName() == "" && len(b) == 0 {
				continue // an input left empty
			}
			if name == "image" {
				name = "file"
			}
			files = append(files, filePart{name: name, data: b})
			count[name]++
		default:
			if _, err := io.Copy(io.Discard, p); err != nil {
				return up, uploadError(err)
			}
		}
	}
	seen := map[string]int{}
	for _, f := range files {
		field := f.name
		if count[f.name] > 1 {
			field = fmt.Sprintf("%s[%d]", f.name, seen[f.name])
		}
		seen[f.name]++
		side := ""
		if f.name != "file" {
			side = f.name
		}
		up.Files = append(up.Files, store.SDKFile{Field: field, Side: side, Data: f.data})
	}
	return up, nil
}

// readJSONUpload reads the JSON form of an upload: one base64 image.
func readJSONUpload(r *http.Request) (store.SDKUpload, error) {
	var in store.DocumentInput
	if err := decode(r, &in); err != nil {
		return store.SDKUpload{}, err
	}
	up := store.SDKUpload{Kind: in.Kind, Side: in.Side, DocType: in.DocType}
	if in.Image == "" {
		return up, store.Invalid("image", "image is required: base64 of a JPEG, PNG or PDF")
	}
	img, err := store.DecodeImage("image", in.Image, true)
	if err != nil {
		return up, err
	}
	up.Files = []store.SDKFile{{Field: "image", Data: img.Data}}
	return up, nil
}

// uploadError maps a failure to read a multipart body to ETOOLARGE past the
// body limit, else EINVALID.
func uploadError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return store.Errorf(store.ETOOLARGE, "body_too_large", "request body is over the %d byte limit", tooLarge.Limit)
	}
	return store.Invalid("body", "malformed multipart body")
}

// ---- Pages and form posts: /sdk/{token}/… ----

// sdkPage is what the page template renders.
type sdkPage struct {
	ui      *sdkUI
	Lang    string
	Theme   string
	Token   string
	Version string
	Title   string
	State   store.SDKState
	Mode    string // step, waiting, verdict, closed
	Step    string // the step shown in mode step
	Nav     []sdkNav
	Index   int // 1-based position of Step in Nav
	Err     *sdkError

	Fields      []sdkFieldView
	Questions   []sdkQuestionView
	CompanyDocs []sdkDocView
	Ubos        []sdkUboView
	UboForm     sdkUboForm
	IDDocTypes  []sdkOption
	Missing     []sdkNav
	Retry       []sdkNav
	Redirect    bool // the verdict page goes on to returnUrl by itself
}

type sdkNav struct {
	Key, Label      string
	Done, Current   bool
	Optional, Retry bool
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
	Locked, Required, Invalid               bool
	Options                                 []sdkOption
}

type sdkQuestionView struct {
	ID, Name, Text, Type, Value string
	Required, Invalid           bool
	Options                     []sdkOption
}

// sdkUboView is a beneficial-owner row as the page lists it.
type sdkUboView struct {
	FullName, Roles, OwnershipPercent, Status string
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

// ReturnRefresh is the content attribute of the meta refresh that takes
// the applicant back to the partner after a final verdict.
func (p *sdkPage) ReturnRefresh() template.HTMLAttr {
	return template.HTMLAttr(`content="5;url=` + p.returnAttr() + `"`)
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
func (ui *sdkUI) build(token string, st store.SDKState, requested string) *sdkPage {
	p := &sdkPage{ui: ui, Lang: sdkLang(st.Lang), Theme: st.Theme, Token: token, Version: ui.version, State: st}
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
		p.Nav = append(p.Nav, sdkNav{Key: s.Kind, Done: s.HasData && !missing[s.Kind], Optional: s.Optional, Retry: retry})
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
	case st.InReview:
		p.Mode = "waiting"
	case st.Verdict != nil && (st.Verdict.Final || requested == "" || !st.AcceptsData):
		p.Mode = "verdict"
		p.Redirect = st.Verdict.Final && st.RedirectURL != ""
	case !st.AcceptsData:
		p.Mode = "closed"
	default:
		p.Mode = "step"
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
		case "legalForm":
			v.Input = "select"
			for _, l := range store.LegalForms() {
				v.Options = append(v.Options, sdkOption{Value: l, Label: strings.ToUpper(strings.ReplaceAll(l, "_", " "))})
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
	for _, d := range st.CompanyRequiredDocuments {
		label := p.T("doc." + d)
		if label == "doc."+d {
			label = strings.ReplaceAll(d, "_", " ")
		}
		p.CompanyDocs = append(p.CompanyDocs, sdkDocView{DocType: d, Label: label, Uploaded: p.hasDocType(d)})
	}
	for _, t := range store.IDDocTypes() {
		p.IDDocTypes = append(p.IDDocTypes, sdkOption{Value: t, Label: p.T("doc." + t)})
	}
	for _, u := range st.Ubos {
		roles := make([]string, len(u.Roles))
		for i, r := range u.Roles {
			roles[i] = p.T("role." + r)
		}
		p.Ubos = append(p.Ubos, sdkUboView{FullName: u.FullName, Roles: strings.Join(roles, ", "),
			OwnershipPercent: string(u.OwnershipPercent), Status: p.T("enrollment." + u.EnrollmentStatus)})
	}
	p.UboForm = sdkUboForm{}
	for _, r := range store.UboRoles() {
		p.UboForm.Roles = append(p.UboForm.Roles, sdkOption{Value: r, Label: p.T("role." + r)})
	}
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
func (ui *sdkUI) render(w http.ResponseWriter, r *http.Request, p *sdkPage, status int) {
	for i := range p.Fields {
		selected(p.Fields[i].Options, p.Fields[i].Value)
	}
	for i := range p.Questions {
		selected(p.Questions[i].Options, p.Questions[i].Value)
	}
	ui.write(w, r, "page", p, status)
}

func (ui *sdkUI) write(w http.ResponseWriter, r *http.Request, name string, data any, status int) {
	var buf bytes.Buffer
	if err := ui.pages.ExecuteTemplate(&buf, name, data); err != nil {
		ui.s.writeError(w, r, fmt.Errorf("render %s: %w", name, err))
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
}

// fail answers a page request whose session cannot be used: 410 for an
// expired or unknown link (SPEC §3.8), each with its own text; other errors
// as the API would.
func (ui *sdkUI) fail(w http.ResponseWriter, r *http.Request, err error) {
	lang := "en"
	if al := strings.ToLower(r.Header.Get("Accept-Language")); strings.HasPrefix(al, "de") {
		lang = "de"
	}
	p := &sdkPage{ui: ui, Lang: lang}
	page := sdkMessagePage{Lang: lang, Theme: "light", Version: ui.version}
	switch store.ErrorCode(err) {
	case store.EGONE:
		page.Title, page.Text = p.T("gone.title"), p.T("gone.text")
		ui.write(w, r, "message", page, http.StatusGone)
	case store.EUNAUTHORIZED:
		page.Title, page.Text = p.T("notfound.title"), p.T("notfound.text")
		ui.write(w, r, "message", page, http.StatusGone)
	default:
		ui.s.writeError(w, r, err)
	}
}

// formError shows a failed form post: the page of step again with the
// error, with the status the API would answer.
func (ui *sdkUI) formError(w http.ResponseWriter, r *http.Request, token, step string, err error, posted url.Values) {
	e := store.AsError(err)
	if e.Code == store.EGONE || e.Code == store.EUNAUTHORIZED || e.Code == store.EINTERNAL {
		ui.fail(w, r, err)
		return
	}
	st, verr := ui.s.store.SDKView(token)
	if verr != nil {
		ui.fail(w, r, verr)
		return
	}
	p := ui.build(token, st, step)
	label := e.Field
	base, _, _ := strings.Cut(e.Field, "[") // roles[1] is labelled as roles
	if l := p.T("field." + base); l != "field."+base {
		label = l
	}
	switch {
	case e.Code == store.ELOCKED:
		p.Err = &sdkError{Title: p.Tf("error.locked", label), Message: e.Message}
	case e.Field != "":
		p.Err = &sdkError{Title: p.Tf("error.field", label), Message: e.Message}
	case e.Code == store.ECONFLICT:
		p.Err = &sdkError{Title: p.T("error.conflict"), Message: e.Message}
	default:
		p.Err = &sdkError{Title: p.T("error"), Message: e.Message}
	}
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
	for i := range p.Questions {
		q := &p.Questions[i]
		q.Invalid = "questionnaire."+q.ID == e.Field
		if vs, ok := posted[q.Name]; ok {
			q.Value = vs[0]
		}
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status = http.StatusBadRequest
	}
	ui.render(w, r, p, status)
}

// done answers a successful form post of step with a redirect to the page:
// the next open step, or the page itself once it no longer shows steps.
func (ui *sdkUI) done(w http.ResponseWriter, r *http.Request, token string, st store.SDKState, step string) {
	sdkHeaders(w)
	target := "/sdk/" + url.PathEscape(token)
	if p := ui.build(token, st, ""); p.Mode == "step" {
		target += "?step=" + url.QueryEscape(p.next(step))
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// page renders GET /sdk/{token}?step=….
func (ui *sdkUI) page(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.s.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return
	}
	ui.render(w, r, ui.build(token, st, r.URL.Query().Get("step")), http.StatusOK)
}

// returnTo sends the applicant back to the partner's returnUrl with
// externalUserId and reviewAnswer once there is a verdict; before, or
// without a returnUrl, back to the page.
func (ui *sdkUI) returnTo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.s.store.SDKView(token)
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

// postPersonalInfo takes the personal (or company) data form. An input
// left empty clears a value the applicant gave before.
func (ui *sdkUI) postPersonalInfo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.s.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		ui.formError(w, r, token, "personal", store.Invalid("body", "malformed form"), nil)
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
	st, err = ui.s.store.SDKPersonalInfo(token, in)
	if err != nil {
		ui.formError(w, r, token, "personal", err, r.PostForm)
		return
	}
	ui.done(w, r, token, st, "personal")
}

// postDocuments takes an upload form (multipart).
func (ui *sdkUI) postDocuments(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	up, err := readUpload(r)
	var st store.SDKState
	if err == nil {
		st, err = ui.s.store.SDKAddDocuments(token, up)
	}
	if err != nil {
		if store.ErrorCode(err) == store.ETOOLARGE {
			ui.s.writeError(w, r, err)
			return
		}
		ui.formError(w, r, token, up.Kind, err, nil)
		return
	}
	ui.done(w, r, token, st, up.Kind)
}

// postQuestionnaire takes the questionnaire form: inputs "q.<id>"; a
// boolean answer is "true" or "false"; an empty input is no answer.
func (ui *sdkUI) postQuestionnaire(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.s.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return
	}
	if err := r.ParseForm(); err != nil {
		ui.formError(w, r, token, "questionnaire", store.Invalid("body", "malformed form"), nil)
		return
	}
	answers := map[string]json.RawMessage{}
	for _, q := range st.Questionnaire {
		v := strings.TrimSpace(r.PostForm.Get("q." + q.ID))
		if v == "" {
			continue
		}
		var b []byte
		if q.Type == "boolean" && (v == "true" || v == "false") {
			b = []byte(v)
		} else {
			b, _ = json.Marshal(v)
		}
		answers[q.ID] = b
	}
	st, err = ui.s.store.SDKAnswers(token, answers)
	if err != nil {
		ui.formError(w, r, token, "questionnaire", err, r.PostForm)
		return
	}
	ui.done(w, r, token, st, "questionnaire")
}

// postUbo takes the form that adds a beneficial-owner row (source sdk)
// and shows the rows again, so that another can be added.
func (ui *sdkUI) postUbo(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if err := r.ParseForm(); err != nil {
		ui.formError(w, r, token, "ubo", store.Invalid("body", "malformed form"), nil)
		return
	}
	if _, err := ui.s.store.SDKAddUbo(token, uboFormInput(r.PostForm)); err != nil {
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

// postSubmit sends the applicant to review; the page then waits for the
// verdict.
func (ui *sdkUI) postSubmit(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	st, err := ui.s.store.SDKSubmit(token)
	if err != nil {
		ui.formError(w, r, token, "review", err, nil)
		return
	}
	ui.done(w, r, token, st, "review")
}

// asset serves the embedded stylesheet and script. With ?v= of the
// current assets the answer may be cached for good.
func (ui *sdkUI) asset(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	name := path.Clean(strings.TrimPrefix(ps.ByName("file"), "/"))
	b, err := sdkFiles.ReadFile("sdk/static/" + name)
	if err != nil || strings.Contains(name, "/") {
		ui.s.writeError(w, r, store.Errorf(store.ENOTFOUND, "asset_not_found", "no asset %q", name))
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
