package console

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Applicants: list, detail with company structure, documents, decision.

// Applicants serves GET /console/applicants: filters, search, pages.
func (c *Console) Applicants(w http.ResponseWriter, r *Request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	search := q.Get("q")
	if search == "" {
		search = q.Get("search") // the name a script may guess
	}
	f := store.ApplicantFilter{Status: q.Get("status"), ReviewStatus: q.Get("reviewStatus"), Type: q.Get("type"), Query: search}
	items, next, err := c.store.Applicants(r.env, f, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "applicants", "Applicants", "applicants", map[string]any{
		"Items": items, "Next": deref(next), "Status": f.Status, "ReviewStatus": f.ReviewStatus, "Q": search, "Type": q.Get("type"),
		"Types": []string{"individual", "company"}, "Statuses": []string{store.StatusActive, store.StatusDeactivated, store.StatusBlocklisted},
		"ReviewStatuses": store.ReviewStatuses()})
}

// uboRow is one company-structure row as the console shows it, with the
// child applicant's state.
type uboRow struct {
	Fields      []field
	Child       string
	ChildReview *store.Review
}

// Applicant serves GET /console/applicants/:id.
func (c *Console) Applicant(w http.ResponseWriter, r *Request) error {
	return c.applicantPage(w, r, http.StatusOK, nil)
}

// applicantPage renders the applicant page with status; form, when not
// nil, is a decision form that was refused, shown again with its error.
func (c *Console) applicantPage(w http.ResponseWriter, r *Request, status int, form *decisionForm) error {
	id := r.params.ByName("id")
	// The version of what the page shows, and the attempt, are read
	// before the page's data: a change landing between the reads leaves
	// the form an older version than the data shown, which Decide
	// refuses, never the reverse.
	version, err := c.store.ApplicantVersion(r.env, id)
	if err != nil {
		return err
	}
	shown, err := c.store.Status(r.env, id)
	if err != nil {
		return err
	}
	a, err := c.store.Applicant(r.env, id)
	if err != nil {
		return err
	}
	steps, err := c.store.Steps(r.env, id)
	if err != nil {
		return err
	}
	history, err := c.store.ApplicantHistory(r.env, id)
	if err != nil {
		return err
	}
	structure, rows, hasRows, err := c.companyStructure(r.env, a)
	if err != nil {
		return err
	}
	shares, err := c.store.SharedImages(r.env, id)
	if err != nil {
		return err
	}
	data := map[string]any{"A": a, "Steps": steps.Steps, "History": history, "Labels": store.RejectLabels(),
		"Findings": findings(history, a.Documents, shares), "Countries": countryNames(a.Documents), "IDDocs": idDocuments(a.Documents),
		"DocTypes": hostedui.DocTypeNames(),
		"Awaiting": a.Review.ReviewStatus == store.ReviewAwaiting, "Info": infoFields(a), "Answers": c.answers(r.env, a),
		"AsksQuestions": hasStep(steps.Steps, store.StepQuestionnaire),
		"Structure":     structure, "Rows": rows, "HasRows": hasRows, "Form": form, "Attempt": shown.Attempt, "Version": version}
	if form == nil {
		data["Form"] = &decisionForm{RejectType: store.RejectFinal}
	}
	return c.render(w, r, status, "applicant", a.ExternalUserID, "applicants", data)
}

// countryNames are the English names of the documents' issuing countries
// by code.
func countryNames(docs []store.Document) map[string]string {
	out := map[string]string{}
	for _, d := range docs {
		if d.Country != "" {
			out[string(d.Country)] = hostedui.CountryName(string(d.Country))
		}
	}
	return out
}

// idDocument is what the identity document says it is: its type and
// issuing country, the data the applicant entered beside the images.
type idDocument struct {
	Side, DocType, Country, CountryName string
}

// idDocuments lists the identity document's sides with type and country.
func idDocuments(docs []store.Document) []idDocument {
	var out []idDocument
	for _, d := range docs {
		if d.Kind == store.StepIdentityDoc {
			out = append(out, idDocument{Side: string(d.Side), DocType: string(d.DocType), Country: string(d.Country),
				CountryName: hostedui.CountryName(string(d.Country))})
		}
	}
	return out
}

// infoFields lists the applicant's data fields that have a value.
func infoFields(a store.Applicant) []field {
	info := a.Info
	if a.Type == "company" {
		info = a.CompanyInfo
	}
	var out []field
	for _, f := range recordFields(info) {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

// answer is one questionnaire answer as the console shows it.
type answer struct {
	Question, ID, Text string
}

// answers lists the applicant's questionnaire answers, in the order of
// its level's questions (with their text), then any other members in name
// order (a level without questions takes the partner's own): a boolean as
// Yes or No, a string as it is, anything else as its JSON.
func (c *Console) answers(env store.Env, a store.Applicant) []answer {
	if len(a.Questionnaire) == 0 {
		return nil
	}
	// The questions as the applicant was asked them: an edit of the level
	// since (a question's text changed, one removed) does not put the
	// answers under words the applicant never read. Answers given before
	// the questions were kept with them show the level's questions now.
	var questions []store.AskedQuestion
	if asked, err := c.store.QuestionsAsked(env, a.ExternalUserID); err == nil && len(asked) > 0 {
		questions = asked
	} else if l, err := c.store.Level(env, a.VerificationLevelName); err == nil {
		for _, q := range l.Questionnaire {
			questions = append(questions, store.AskedQuestion{ID: q.ID, Text: q.Text})
		}
	}
	text := func(raw json.RawMessage) string {
		var b bool
		if json.Unmarshal(raw, &b) == nil {
			return map[bool]string{true: "Yes", false: "No"}[b]
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
		return string(raw)
	}
	var out []answer
	asked := map[string]bool{}
	for _, q := range questions {
		asked[q.ID] = true
		if raw, ok := a.Questionnaire[q.ID]; ok && string(raw) != "null" {
			out = append(out, answer{Question: q.Text, ID: q.ID, Text: text(raw)})
		}
	}
	for _, id := range slices.Sorted(maps.Keys(a.Questionnaire)) {
		if !asked[id] {
			out = append(out, answer{Question: id, ID: id, Text: text(a.Questionnaire[id])})
		}
	}
	return out
}

// hasStep reports whether steps has one of kind.
func hasStep(steps []store.Step, kind string) bool {
	return slices.ContainsFunc(steps, func(st store.Step) bool { return st.Kind == kind })
}

// companyStructure reads the company-structure parts of the applicant: for
// a company its flags, counts and allChildrenComplete (GET
// …/company-structure) and its ubos[] rows as GET /v1/applicants/{id}
// renders them; for a spawned child its parent. hasRows is false while the
// record carries no ubos field at all.
func (c *Console) companyStructure(env store.Env, a store.Applicant) (structure []field, rows []uboRow, hasRows bool, err error) {
	id := a.ExternalUserID
	parent, err := c.store.ApplicantParent(env, id)
	if err != nil {
		return nil, nil, false, err
	}
	if parent != "" {
		structure = append(structure, field{Name: "parentExternalUserId", Value: parent})
	}
	if a.Type == "company" {
		cs, err := c.store.CompanyStructure(env, id)
		if err != nil {
			return nil, nil, false, err
		}
		for _, f := range recordFields(cs) {
			if f.Name != "externalUserId" && f.Name != "counts" {
				structure = append(structure, f)
			}
		}
		structure = append(structure, recordFields(cs.Counts)...)
	}
	raw, err := c.store.ApplicantJSON(env, id)
	if err != nil {
		return nil, nil, false, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, false, err
	}
	ubos, ok := m["ubos"]
	if !ok {
		return structure, nil, false, nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(ubos, &items); err != nil {
		return nil, nil, false, err
	}
	for _, item := range items {
		var row struct {
			Child string `json:"childExternalUserId"`
		}
		if err := json.Unmarshal(item, &row); err != nil {
			return nil, nil, false, err
		}
		u := uboRow{Fields: recordFields(item), Child: row.Child}
		if row.Child != "" {
			ca, err := c.store.Applicant(env, row.Child)
			switch {
			case err == nil:
				u.ChildReview = &ca.Review
			case store.ErrorCode(err) != store.ENOTFOUND:
				return nil, nil, false, err
			}
		}
		rows = append(rows, u)
	}
	return structure, rows, true, nil
}

// Document serves GET /console/applicants/:id/documents/:sha: the stored
// image bytes with their content type.
func (c *Console) Document(w http.ResponseWriter, r *Request) error {
	img, err := c.store.ApplicantImage(r.env, r.params.ByName("id"), r.params.ByName("sha"))
	if err != nil {
		return err
	}
	// Opened on its own (the zoom), the browser's image viewer styles the
	// page inline: allowed here, where the only content is the image.
	w.Header().Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.Header().Set("Content-Type", img.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(img.Data)))
	w.Header().Set("Content-Disposition", "inline")
	w.Header().Set("Cache-Control", "private, no-store")
	w.Write(img.Data)
	return nil
}

// decisionForm is the decision form as posted, shown again with Err (and
// the field it names) when the console refuses it.
type decisionForm struct {
	Answer, RejectType, Comment string
	Labels                      []string
	Err, ErrField               string
	// Conflict marks a decision refused because the applicant changed
	// since its page was shown (409): the page shows what was posted.
	Conflict bool
}

// Has reports whether label is checked.
func (f *decisionForm) Has(label string) bool {
	for _, l := range f.Labels {
		if l == label {
			return true
		}
	}
	return false
}

// Decide serves POST /console/applicants/:id/decision: the same store
// operation as POST /v1/admin/applicants/{id}/decision, with two rules of
// the console's own: a rejection names at least one label (the applicant
// is told why in words), and a FINAL rejection is confirmed (the form's
// "confirmFinal"), since it cannot be undone short of a reset. A refused
// form is shown again, as posted, with the error beside the field (400).
func (c *Console) Decide(w http.ResponseWriter, r *Request) error {
	id := r.params.ByName("id")
	f := r.PostForm
	answer := f.Get("reviewAnswer")
	if answer == "" {
		answer = f.Get("decision")
	}
	d := store.Decision{ReviewAnswer: consoleAnswer(answer), ModerationComment: formText(f.Get("moderationComment")), Operator: r.sess.Operator}
	form := &decisionForm{Answer: d.ReviewAnswer, Comment: d.ModerationComment, RejectType: strings.ToUpper(strings.TrimSpace(f.Get("reviewRejectType")))}
	if v := f.Get("shownAttempt"); v != "" {
		// The submission the page showed: a later one is refused, since its
		// documents were never on the operator's screen. A form without it
		// (a script) decides the current one, as the API does.
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return store.Invalid("shownAttempt", "shownAttempt is the attempt number the page showed, a whole number from 1")
		}
		d.Attempt = n
	}
	d.Version = f.Get("shownVersion") // what the page showed: any change of it since refuses
	if d.ReviewAnswer == store.Red {
		d.ReviewRejectType, d.RejectLabels = form.RejectType, f["rejectLabels"]
		form.Labels = d.RejectLabels
		switch {
		case len(d.RejectLabels) == 0:
			form.Err, form.ErrField = "Choose at least one reject label: it tells the applicant and the partner why.", "rejectLabels"
		case d.ReviewRejectType == store.RejectFinal && f.Get("confirmFinal") == "":
			form.Err, form.ErrField = "A FINAL rejection cannot be undone without a reset: tick the confirmation to record it.", "confirmFinal"
		}
		if form.Err != "" {
			return c.applicantPage(w, r, http.StatusBadRequest, form)
		}
	}
	if _, err := c.store.Decide(r.env, id, d); err != nil {
		switch e := store.AsError(err); e.Code {
		case store.EINVALID:
			form.Err, form.ErrField = e.Message, e.Field
			return c.applicantPage(w, r, wire.Status(err), form)
		case store.ECONFLICT:
			// Another operator decided, or the applicant was submitted again
			// or changed, since the page was shown: the page as it is now,
			// with what was posted kept beside the reason it was not
			// recorded.
			form.Err, form.Conflict = "Nothing was recorded: "+e.Message+".", true
			return c.applicantPage(w, r, wire.Status(err), form)
		}
		return err
	}
	return redirect(w, r, "/console/applicants/"+wire.PathSegment(id), "decided")
}

// formText is a textarea's text as an API client would send it: trimmed,
// and with the CRLF line breaks a browser sends (HTML's form encoding)
// written \n.
func formText(v string) string {
	return strings.ReplaceAll(strings.TrimSpace(v), "\r\n", "\n")
}

// consoleAnswer reads the decision form's verdict: GREEN or RED, also
// written approve or reject, in any case; anything else is passed on for
// the store to refuse.
func consoleAnswer(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "green", "approve", "approved":
		return store.Green
	case "red", "reject", "rejected":
		return store.Red
	}
	return v
}
