package server

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/complybox/complybox/store"
)

// Console pages: login, overview, environment switch.

// home serves GET /console: the login form without a session, the
// overview with one.
func (c *console) home(w http.ResponseWriter, r *consoleRequest) error {
	if c.authorize(r) != nil {
		return c.loginPage(w, r)
	}
	waiting, _, err := c.s.store.Applicants(r.env, store.ApplicantFilter{ReviewStatus: store.ReviewAwaiting}, store.Page{Limit: 20})
	if err != nil {
		return err
	}
	failing, _, err := c.s.store.Deliveries(r.env, store.DeliveryFilter{Status: store.DeliveryDead}, store.Page{Limit: 20})
	if err != nil {
		return err
	}
	activity, err := c.s.store.ConsoleActivity(r.env)
	if err != nil {
		return err
	}
	if len(activity) > 30 {
		activity = activity[:30]
	}
	return c.render(w, r, http.StatusOK, "home", "Overview", "home", map[string]any{
		"Waiting": waiting, "Dead": failing, "Activity": activity})
}

// toHome serves GET /console/: a permanent redirect to /console, the one
// address of the overview (the query is kept).
func (c *console) toHome(w http.ResponseWriter, r *consoleRequest) error {
	to := "/console"
	if r.URL.RawQuery != "" {
		to += "?" + r.URL.RawQuery
	}
	http.Redirect(w, r.Request, to, http.StatusMovedPermanently)
	return nil
}

// loginPage serves GET /console/login.
func (c *console) loginPage(w http.ResponseWriter, r *consoleRequest) error {
	if ck, err := r.Cookie(consoleCookie); err == nil {
		if _, err := c.s.store.ConsoleSessionByID(ck.Value); err == nil {
			return redirect(w, r, "/console", "")
		}
	}
	return c.renderLogin(w, r, http.StatusOK, "")
}

func (c *console) renderLogin(w http.ResponseWriter, r *consoleRequest, status int, msg string) error {
	set, err := c.s.store.ConsolePasswordSet()
	if err != nil {
		return err
	}
	r.sess = store.ConsoleSession{CSRF: c.loginToken(w, r.Request)}
	return c.render(w, r, status, "login", "Log in", "", map[string]any{"PasswordSet": set, "Error": msg})
}

// login serves POST /console/login.
func (c *console) login(w http.ResponseWriter, r *consoleRequest) error {
	if err := parseForm(r.Request); err != nil {
		return err
	}
	if !checkLoginToken(r.Request) {
		return errCSRF()
	}
	sess, err := c.s.store.ConsoleLogin(r.PostForm.Get("password"), clientAddr(r.Request))
	switch store.ErrorCode(err) {
	case "":
	case store.EUNAUTHORIZED:
		return c.renderLogin(w, r, http.StatusUnauthorized, "The password is not correct.")
	case store.ECONFLICT:
		return c.renderLogin(w, r, http.StatusConflict, "No console password is set yet.")
	default:
		return err
	}
	http.SetCookie(w, c.cookie(consoleCookie, sess.ID, int(store.ConsoleSessionTTL.Seconds())))
	http.SetCookie(w, c.cookie(consoleLoginCookie, "", -1))
	return redirect(w, r, "/console", "")
}

// logout serves POST /console/logout.
func (c *console) logout(w http.ResponseWriter, r *consoleRequest) error {
	if err := c.s.store.ConsoleLogout(r.sess.ID); err != nil {
		return err
	}
	http.SetCookie(w, c.cookie(consoleCookie, "", -1))
	return redirect(w, r, "/console/login", "logged-out")
}

// switchEnv serves POST /console/env: the environment the console shows.
func (c *console) switchEnv(w http.ResponseWriter, r *consoleRequest) error {
	env := store.Env(r.PostForm.Get("env"))
	if _, err := c.s.store.SetConsoleEnv(r.sess.ID, env); err != nil {
		return err
	}
	return redirect(w, r, consoleBack(r.PostForm.Get("back")), "env")
}

// consoleBack is where the environment switch returns to: the console page
// back names, a detail page's list (a record of one environment does not
// exist in the other), and /console for anything else.
func consoleBack(back string) string {
	if strings.ContainsAny(back, "\\\r\n") {
		return "/console"
	}
	u, err := url.Parse(back)
	if err != nil || u.Scheme != "" || u.Host != "" || u.Opaque != "" || !strings.HasPrefix(u.Path, "/") {
		return "/console"
	}
	clean := path.Clean(u.Path)
	if clean != "/console" && !strings.HasPrefix(clean, "/console/") {
		return "/console"
	}
	if parts := strings.Split(clean, "/"); len(parts) > 3 {
		return strings.Join(parts[:3], "/")
	}
	q := u.Query()
	q.Del("cursor") // a page of the other environment's list
	q.Del("ok")
	if len(q) > 0 {
		clean += "?" + q.Encode()
	}
	return clean
}

// staticFile serves GET /console/static/:file from the embedded assets.
func (c *console) staticFile(w http.ResponseWriter, r *consoleRequest) error {
	name := r.params.ByName("file")
	b, err := fs.ReadFile(c.static, name)
	if err != nil {
		return store.NotFound("file", name)
	}
	ct := "application/octet-stream"
	if strings.HasSuffix(name, ".css") {
		ct = "text/css; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=3600")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return nil
}

// Applicants.

// applicants serves GET /console/applicants: filters, search, pages.
func (c *console) applicants(w http.ResponseWriter, r *consoleRequest) error {
	p, err := page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	search := q.Get("q")
	if search == "" {
		search = q.Get("search") // the name a script may guess
	}
	f := store.ApplicantFilter{Status: q.Get("status"), ReviewStatus: q.Get("reviewStatus"), Type: q.Get("type"), Query: search}
	items, next, err := c.s.store.Applicants(r.env, f, p)
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

// applicant serves GET /console/applicants/:id.
func (c *console) applicant(w http.ResponseWriter, r *consoleRequest) error {
	id := r.params.ByName("id")
	a, err := c.s.store.Applicant(r.env, id)
	if err != nil {
		return err
	}
	steps, err := c.s.store.Steps(r.env, id)
	if err != nil {
		return err
	}
	history, err := c.s.store.ApplicantHistory(r.env, id)
	if err != nil {
		return err
	}
	structure, rows, hasRows, err := c.companyStructure(r.env, a)
	if err != nil {
		return err
	}
	data := map[string]any{"A": a, "Steps": steps.Steps, "History": history, "Labels": store.RejectLabels(),
		"Awaiting": a.Review.ReviewStatus == store.ReviewAwaiting, "Info": infoFields(a),
		"Structure": structure, "Rows": rows, "HasRows": hasRows}
	return c.render(w, r, http.StatusOK, "applicant", a.ExternalUserID, "applicants", data)
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

// companyStructure reads the company-structure parts of the applicant: for
// a company its flags, counts and allChildrenComplete (GET
// …/company-structure) and its ubos[] rows as GET /v1/applicants/{id}
// renders them; for a spawned child its parent. hasRows is false while the
// record carries no ubos field at all.
func (c *console) companyStructure(env store.Env, a store.Applicant) (structure []field, rows []uboRow, hasRows bool, err error) {
	id := a.ExternalUserID
	parent, err := c.s.store.ApplicantParent(env, id)
	if err != nil {
		return nil, nil, false, err
	}
	if parent != "" {
		structure = append(structure, field{Name: "parentExternalUserId", Value: parent})
	}
	if a.Type == "company" {
		cs, err := c.s.store.CompanyStructure(env, id)
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
	raw, err := c.s.store.ApplicantJSON(env, id)
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
			ca, err := c.s.store.Applicant(env, row.Child)
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

// document serves GET /console/applicants/:id/documents/:sha: the stored
// image bytes with their content type.
func (c *console) document(w http.ResponseWriter, r *consoleRequest) error {
	img, err := c.s.store.ApplicantImage(r.env, r.params.ByName("id"), r.params.ByName("sha"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", img.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(img.Data)))
	w.Header().Set("Content-Disposition", "inline")
	w.Header().Set("Cache-Control", "private, no-store")
	w.Write(img.Data)
	return nil
}

// decide serves POST /console/applicants/:id/decision: the same store
// operation as POST /v1/admin/applicants/{id}/decision.
func (c *console) decide(w http.ResponseWriter, r *consoleRequest) error {
	id := r.params.ByName("id")
	f := r.PostForm
	answer := f.Get("reviewAnswer")
	if answer == "" {
		answer = f.Get("decision")
	}
	d := store.Decision{ReviewAnswer: consoleAnswer(answer), ModerationComment: strings.TrimSpace(f.Get("moderationComment"))}
	if d.ReviewAnswer == store.Red {
		d.ReviewRejectType, d.RejectLabels = strings.ToUpper(strings.TrimSpace(f.Get("reviewRejectType"))), f["rejectLabels"]
	}
	if _, err := c.s.store.Decide(r.env, id, d); err != nil {
		return err
	}
	return redirect(w, r, "/console/applicants/"+url.PathEscape(id), "decided")
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

// Deliveries.

// deliveries serves GET /console/deliveries.
func (c *console) deliveries(w http.ResponseWriter, r *consoleRequest) error {
	p, err := page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.DeliveryFilter{Status: q.Get("status"), Destination: q.Get("destination"), EventType: q.Get("eventType")}
	switch f.Status {
	case "", store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed, store.DeliveryDead:
	default:
		return store.Invalid("status", "status must be pending, delivered, failed or dead")
	}
	switch f.Destination {
	case "", store.DestCustody, store.DestKYC:
	default:
		return store.Invalid("destination", "destination must be custody or kyc")
	}
	items, next, err := c.s.store.Deliveries(r.env, f, p)
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "deliveries", "Deliveries", "deliveries", map[string]any{
		"Items": items, "Next": deref(next), "Status": f.Status, "Destination": f.Destination, "EventType": f.EventType,
		"Statuses": []string{store.DeliveryPending, store.DeliveryDelivered, store.DeliveryFailed, store.DeliveryDead}})
}

// delivery serves GET /console/deliveries/:id.
func (c *console) delivery(w http.ResponseWriter, r *consoleRequest) error {
	d, err := c.s.store.Delivery(r.env, r.params.ByName("id"))
	if err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "delivery", "Delivery "+d.ID, "deliveries", map[string]any{
		"D": d, "Summary": recordFields(d.DeliverySummary),
		"Retryable": d.Status == store.DeliveryFailed || d.Status == store.DeliveryDead})
}

// retryDelivery serves POST /console/deliveries/:id/retry.
func (c *console) retryDelivery(w http.ResponseWriter, r *consoleRequest) error {
	id := r.params.ByName("id")
	if _, err := c.s.store.RetryDelivery(r.env, id); err != nil {
		return err
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.delivery_retried", map[string]any{"deliveryId": id}); err != nil {
		return err
	}
	return redirect(w, r, "/console/deliveries/"+url.PathEscape(id), "retried")
}

// retryDeliveries serves POST /console/retry-deliveries: bulk retry of the
// failed or dead deliveries (status failed, dead, or empty for both)
// created between since and until.
func (c *console) retryDeliveries(w http.ResponseWriter, r *consoleRequest) error {
	f := r.PostForm
	in := store.DeliveryFilter{Status: f.Get("status"), Destination: f.Get("destination")}
	switch in.Destination {
	case "", store.DestCustody, store.DestKYC:
	default:
		return store.Invalid("destination", "destination must be custody or kyc")
	}
	var ok bool
	if v := strings.TrimSpace(f.Get("since")); v != "" {
		if in.Since, ok = store.ParseTime(v); !ok {
			return store.Invalid("since", "since must be an ISO 8601 timestamp such as 2026-11-21T05:00:00Z")
		}
	}
	if v := strings.TrimSpace(f.Get("until")); v != "" {
		if in.Until, ok = store.ParseTime(v); !ok {
			return store.Invalid("until", "until must be an ISO 8601 timestamp such as 2026-11-21T06:00:00Z")
		}
	}
	// No status: both kinds of undelivered ones, failed and dead.
	statuses := []string{in.Status}
	if in.Status == "" {
		statuses = []string{store.DeliveryFailed, store.DeliveryDead}
	}
	n := 0
	for _, st := range statuses {
		f := in
		f.Status = st
		m, err := c.s.store.RetryDeliveries(r.env, f)
		if err != nil {
			return err
		}
		n += m
	}
	if err := c.s.store.RecordConsoleAction(r.env, "console.deliveries_retried", map[string]any{
		"status": in.Status, "destination": in.Destination, "since": store.At(in.Since), "until": store.At(in.Until), "requeued": n}); err != nil {
		return err
	}
	return c.render(w, r, http.StatusOK, "requeued", "Deliveries requeued", "deliveries", map[string]any{"N": n, "Status": in.Status})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
