package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"slices"
	"sort"
	"strings"
)

// Applicant statuses.
const (
	StatusActive      = "active"
	StatusDeactivated = "deactivated"
	StatusBlocklisted = "blocklisted"
)

// Risk levels.
const (
	RiskUnknown = "unknown"
	RiskLow     = "low"
	RiskMedium  = "medium"
	RiskHigh    = "high"
)

// NullString is a string that encodes as null when empty.
type NullString string

// MarshalJSON implements json.Marshaler.
func (n NullString) MarshalJSON() ([]byte, error) {
	if n == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(n))
}

// UnmarshalJSON implements json.Unmarshaler.
func (n *NullString) UnmarshalJSON(b []byte) error {
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*n = ""
	if s != nil {
		*n = NullString(*s)
	}
	return nil
}

// Document is one uploaded image of an applicant.
type Document struct {
	Kind          string     `json:"kind"`
	Side          NullString `json:"side"`
	DocType       NullString `json:"docType"`
	Country       NullString `json:"country"` // an identity document's issuing country (ISO alpha-3), when known
	UploadedAtUtc Time       `json:"uploadedAtUtc"`
	SHA256        string     `json:"sha256"`
	ContentType   string     `json:"contentType"`
}

// Review is the applicant's aggregate verdict.
type Review struct {
	ReviewStatus      string     `json:"reviewStatus"`
	ReviewAnswer      NullString `json:"reviewAnswer"`
	ReviewRejectType  NullString `json:"reviewRejectType"`
	RejectLabels      []string   `json:"rejectLabels"`
	ModerationComment NullString `json:"moderationComment"`
	ReviewedAtUtc     Time       `json:"reviewedAtUtc"`
}

// Applicant is an applicant as GET /v1/applicants/{id} shows it.
type Applicant struct {
	ID                    string             `json:"id"`
	ExternalUserID        string             `json:"externalUserId"`
	Type                  string             `json:"type"`
	VerificationLevelName string             `json:"verificationLevelName"`
	Status                string             `json:"status"`
	RiskLevel             string             `json:"riskLevel"`
	Info                  map[string]*string `json:"info,omitempty"`
	CompanyInfo           map[string]*string `json:"companyInfo,omitempty"`
	LockedFields          []string           `json:"lockedFields"`
	Documents             []Document         `json:"documents"`
	// Questionnaire holds the answers by question id, as they were sent
	// (POST …/verify, the hosted UI); null before any and after erasure.
	Questionnaire map[string]json.RawMessage `json:"questionnaire"`
	Review        Review                     `json:"review"`
	Monitoring    bool                       `json:"monitoring"`
	CreatedAtUtc  Time                       `json:"createdAtUtc"`
	UpdatedAtUtc  Time                       `json:"updatedAtUtc"`
	// ConsentGivenAtUtc is when the applicant accepted the consent line of
	// the hosted UI's intro (store/hostedui_consent.go); null before.
	ConsentGivenAtUtc Time      `json:"consentGivenAtUtc"`
	Ubos              *[]UboRow `json:"ubos,omitempty"` // UBO hook (store/kyb_ubos.go): a company's rows
}

// diskApplicant is an applicant as stored.
type diskApplicant struct {
	ID          string                     `json:"id"`
	ExternalID  string                     `json:"externalUserId"`
	Type        string                     `json:"type"`
	Level       string                     `json:"level"`
	Status      string                     `json:"status"`
	BlockedFrom string                     `json:"blockedFrom,omitempty"` // the status before the blocklisting, restored when it is removed
	RiskLevel   string                     `json:"riskLevel"`
	Fields      map[string]string          `json:"fields,omitempty"`
	Locked      []string                   `json:"locked,omitempty"`
	Documents   []Document                 `json:"documents,omitempty"`
	Answers     map[string]json.RawMessage `json:"answers,omitempty"`
	Asked       []AskedQuestion            `json:"asked,omitempty"` // the level's questions when Answers were given
	Steps       []Step                     `json:"steps"`
	Review      Review                     `json:"review"`
	Monitoring  bool                       `json:"monitoring,omitempty"`
	Attempt     int                        `json:"attempt"`
	InReview    bool                       `json:"inReview,omitempty"` // sent to review, verdict not reached
	ReviewJob   []byte                     `json:"reviewJob,omitempty"`
	SubmittedAt Time                       `json:"submittedAt"`
	SessionEnd  Time                       `json:"sessionEnd"` // expiry of the latest verification session
	CreatedAt   Time                       `json:"createdAt"`
	UpdatedAt   Time                       `json:"updatedAt"`
	ErasedAt    Time                       `json:"erasedAt"`
	ConsentAt   Time                       `json:"consentAt"` // consent given in the hosted UI
	Seq         uint64                     `json:"seq"`
	uboState                               // UBO hook (store/kyb_ubos.go): rows, structure flags, a child's parent

	indexed []fkey // the filter-index keys as stored; nil for a new applicant
	viewed  []byte // the view's JSON as putApplicant last stored it
}

// Filter-index fields of applicants (applicants_bits, see list_filter.go).
const (
	fApplicantStatus       byte = 's'
	fApplicantReviewStatus byte = 'r'
	fApplicantType         byte = 't'
)

// filterKeys returns the filter-index keys of a as it is now.
func (a *diskApplicant) filterKeys() []fkey {
	return []fkey{{fApplicantStatus, a.Status}, {fApplicantReviewStatus, a.Review.ReviewStatus}, {fApplicantType, a.Type}}
}

// view returns the applicant as the API shows it.
func (a *diskApplicant) view() Applicant {
	v := Applicant{
		ID: a.ID, ExternalUserID: a.ExternalID, Type: a.Type, VerificationLevelName: a.Level,
		Status: a.Status, RiskLevel: a.RiskLevel, LockedFields: a.Locked, Documents: a.Documents,
		Questionnaire: a.Answers, Review: a.Review, Monitoring: a.Monitoring, CreatedAtUtc: a.CreatedAt, UpdatedAtUtc: a.UpdatedAt,
		ConsentGivenAtUtc: a.ConsentAt,
		Ubos:              a.uboView(), // UBO hook (store/kyb_ubos.go)
	}
	info := map[string]*string{}
	for _, f := range fieldsOf(a.Type) {
		if val, ok := a.Fields[f]; ok {
			info[f] = &val
		} else {
			info[f] = nil
		}
	}
	if a.Type == TypeCompany {
		v.CompanyInfo = info
	} else {
		v.Info = info
	}
	if v.LockedFields == nil {
		v.LockedFields = []string{}
	}
	if v.Documents == nil {
		v.Documents = []Document{}
	}
	if v.Review.RejectLabels == nil {
		v.Review.RejectLabels = []string{}
	}
	return v
}

// ApplicantVersion names what the console's applicant page shows of the
// applicant as it is now: its body (data, documents, answers, review,
// status) and its steps. A change of any of them gives another; the
// bookkeeping the page does not show (a new hosted link's expiry, the
// time of the last save) does not. The page carries it so that a
// decision is taken on what it showed (Decision.Version). Returns
// ENOTFOUND.
func (s *Store) ApplicantVersion(env Env, extID string) (string, error) {
	var v string
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		v = a.shownVersion()
		return nil
	})
	return v, err
}

// shownVersion is ApplicantVersion of a.
func (a *diskApplicant) shownVersion() string {
	v := a.view()
	v.UpdatedAtUtc = Time{}
	b, _ := json.Marshal(struct {
		Body  Applicant
		Steps []Step
	}{v, a.Steps})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// AskedQuestion is a question as the applicant was asked it: the text
// its answer was given to, which a later edit of the level does not
// change.
type AskedQuestion struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// answered stores answers given to the questions of level l, with the
// questions as they were asked.
func (a *diskApplicant) answered(l Level, answers map[string]json.RawMessage) {
	a.Answers, a.Asked = answers, nil
	for _, q := range l.Questionnaire {
		a.Asked = append(a.Asked, AskedQuestion{ID: q.ID, Text: q.Text})
	}
}

// QuestionsAsked returns the questions the applicant's answers were given
// to, in the level's order then; nil when there are no answers, or they
// were given before the questions were kept with them (the console then
// shows the level's questions as they are now). Returns ENOTFOUND.
func (s *Store) QuestionsAsked(env Env, extID string) ([]AskedQuestion, error) {
	var out []AskedQuestion
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = a.Asked
		return nil
	})
	return out, err
}

func (t *txn) getApplicant(env Env, extID string) (*diskApplicant, error) {
	b := t.env(env, "applicants").Get([]byte(extID))
	if b == nil {
		return nil, NotFound("applicant", extID)
	}
	a := &diskApplicant{}
	if err := json.Unmarshal(b, a); err != nil {
		return nil, err
	}
	a.indexed = a.filterKeys()
	return a, nil
}

// putApplicant stores the applicant and its rendered view, so that a read
// is a copy of bytes.
func (t *txn) putApplicant(env Env, a *diskApplicant) error {
	b, err := a.appendJSON(nil)
	if err != nil {
		return err
	}
	if err := t.env(env, "applicants").Put([]byte(a.ExternalID), b); err != nil {
		return err
	}
	keys := a.filterKeys()
	if err := t.reindex(env, "applicants_bits", a.Seq, a.indexed, keys); err != nil {
		return err
	}
	a.indexed = keys
	if err := t.trackReview(env, a); err != nil { // in-flight index (schedule_reconcile.go)
		return err
	}
	v := a.view()
	if b, err = v.appendJSON(nil); err != nil {
		return err
	}
	a.viewed = b
	return t.env(env, "applicant_views").Put([]byte(a.ExternalID), b)
}

// save marks a as changed now, derives its aggregate review and stores it.
func (t *txn) save(env Env, a *diskApplicant) error {
	a.UpdatedAt = At(t.now)
	a.recompute()
	if err := t.syncChildData(env, a); err != nil { // UBO hook (store/kyb_company.go): new data of a child shows on its row
		return err
	}
	return t.putApplicant(env, a)
}

// lock adds field to the locked fields, keeping them in field order.
func (a *diskApplicant) lock(field string) {
	if inList(a.Locked, field) {
		return
	}
	order := fieldsOf(a.Type)
	idx := func(f string) int {
		for i, o := range order {
			if o == f {
				return i
			}
		}
		return len(order)
	}
	in := len(a.Locked) == 0 || idx(a.Locked[len(a.Locked)-1]) <= idx(field) // still in field order: no sort
	a.Locked = append(a.Locked, field)
	if !in {
		sort.SliceStable(a.Locked, func(i, j int) bool { return idx(a.Locked[i]) < idx(a.Locked[j]) })
	}
}

func (a *diskApplicant) unlock(field string) {
	out := a.Locked[:0]
	for _, f := range a.Locked {
		if f != field {
			out = append(out, f)
		}
	}
	a.Locked = out
}

// inFlight reports whether a review is in flight as SPEC §2 defines it:
// the applicant's reviewStatus is submitted (every required step holds
// data), in_review or awaitingOperatorReview. A step already sent to
// review counts too, whatever the aggregate says.
func (a *diskApplicant) inFlight() bool {
	switch a.Review.ReviewStatus {
	case ReviewSubmitted, ReviewInReview, ReviewAwaiting:
		return true
	}
	for _, st := range a.Steps {
		if st.ReviewStatus == ReviewInReview || st.ReviewStatus == ReviewAwaiting {
			return true
		}
	}
	return a.InReview
}

// ApplicantInput is the body of POST /v1/applicants, kept raw so that
// fields the level does not enable are dropped before any validation.
type ApplicantInput map[string]json.RawMessage

// JSONMembers names the members an ApplicantInput can carry (the data
// fields of both applicant types and the members of a create), so that
// one given twice or named in another case is refused as a struct's field
// would be (wire.Members); other members are ignored.
func (ApplicantInput) JSONMembers() map[string]reflect.Type { return applicantMembers }

// applicantMembers is ApplicantInput's JSONMembers, a table built once and
// only read (every POST /v1/applicants asks for it).
var applicantMembers = func() map[string]reflect.Type {
	m := map[string]reflect.Type{"externalUserId": nil, "type": nil, "verificationLevelName": nil,
		"ubos": reflect.TypeFor[[]UboInput]()}
	for _, f := range append(individualFields(), companyFields()...) {
		m[f] = nil
	}
	return m
}()

// CreateApplicant creates an applicant, or returns the stored one unchanged
// (created false) when externalUserId exists. Returns EINVALID naming the
// field, ENOTFOUND level_not_found for an unknown level.
func (s *Store) CreateApplicant(env Env, in ApplicantInput) (Applicant, bool, error) {
	a, _, created, err := s.CreateApplicantJSON(env, in)
	return a, created, err
}

// CreateApplicantJSON is CreateApplicant that also returns, for a new
// applicant, the JSON bytes GET /v1/applicants/{id} answers for it (the
// view the write stored), so that the answer needs no second encoding; nil
// for one that existed.
func (s *Store) CreateApplicantJSON(env Env, in ApplicantInput) (Applicant, []byte, bool, error) {
	extID, ok, err := jsonString("externalUserId", in["externalUserId"])
	if err != nil {
		return Applicant{}, nil, false, err
	}
	if !ok || !validExternalUserID(extID) {
		// A spawned child of a parent with a long id has a longer id
		// (SPEC §3.6); asked for again, it is answered as any existing
		// applicant is.
		if ok && childExternalUserID(extID) {
			if a, err := s.Applicant(env, extID); err == nil {
				return a, nil, false, nil
			}
		}
		if !ok || extID == "" {
			return Applicant{}, nil, false, Invalid("externalUserId", "externalUserId is required: 1-100 characters of A-Za-z0-9._:@-")
		}
		return Applicant{}, nil, false, Invalid("externalUserId", "externalUserId must be 1-100 characters of A-Za-z0-9._:@-")
	}
	typ, ok, err := jsonString("type", in["type"])
	if err != nil {
		return Applicant{}, nil, false, err
	}
	if !ok {
		typ = TypeIndividual
	}
	if typ != TypeIndividual && typ != TypeCompany {
		return Applicant{}, nil, false, Invalid("type", "type must be individual or company")
	}
	levelName, named, err := jsonString("verificationLevelName", in["verificationLevelName"])
	if err != nil {
		return Applicant{}, nil, false, err
	}
	if !named || levelName == "" {
		levelName = s.settings.KYC.DefaultIndividualLevel
		if typ == TypeCompany {
			levelName = s.settings.KYC.DefaultCompanyLevel
		}
	}
	var out Applicant
	var viewed []byte
	var created bool
	err = s.updateIn(env, func(t *txn) error {
		created, viewed = false, nil
		if a, err := t.getApplicant(env, extID); err == nil {
			out = a.view()
			return nil
		}
		lvl, err := t.sharedLevel(env, levelName)
		if err != nil {
			return err
		}
		if lvl.ApplicantType != typ {
			return Invalid("verificationLevelName", "level %q is for %s applicants, not %s", levelName, lvl.ApplicantType, typ)
		}
		a := &diskApplicant{
			ID: newID(), ExternalID: extID, Type: typ, Level: lvl.Name, Status: StatusActive, RiskLevel: RiskUnknown,
			Fields: map[string]string{}, Steps: newSteps(lvl.Level, t.now), CreatedAt: At(t.now),
		}
		for _, f := range lvl.enabledFields() {
			raw, present := in[f]
			if !present {
				continue
			}
			v, ok, err := jsonString(f, raw)
			if err != nil || !ok {
				if err != nil {
					return err
				}
				continue
			}
			if v, err = normalizeField(f, v, t.now); err != nil {
				return err
			}
			a.Fields[f] = v
			a.lock(f)
		}
		if err := a.addUbosOnCreate(in["ubos"], t.now); err != nil { // UBO hook (store/kyb_ubos.go): ubos[] on company create
			return err
		}
		if a.Seq, err = index(t.env(env, "applicants_idx"), extID); err != nil {
			return err
		}
		if err := t.env(env, "applicant_ids").Put([]byte(a.ID), []byte(extID)); err != nil {
			return err
		}
		if err := t.useLevel(env, lvl); err != nil {
			return err
		}
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.created", ActorType: ActorPartner,
			Details: map[string]any{"type": typ, "levelName": lvl.Name, "lockedFields": orEmpty(a.Locked)}}); err != nil {
			return err
		}
		if err := t.event(env, a, "applicantCreated", nil); err != nil {
			return err
		}
		out, viewed, created = a.view(), a.viewed, true
		return nil
	})
	return out, viewed, created, err
}

// Applicant returns one applicant by externalUserId. Returns ENOTFOUND.
func (s *Store) Applicant(env Env, extID string) (Applicant, error) {
	var out Applicant
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = a.view()
		return nil
	})
	return out, err
}

// ApplicantJSON returns the applicant as GET /v1/applicants/{id} renders
// it, as JSON bytes. Returns ENOTFOUND.
func (s *Store) ApplicantJSON(env Env, extID string) ([]byte, error) {
	var out []byte
	err := s.viewIn(env, func(t *txn) error {
		b := t.env(env, "applicant_views").Get([]byte(extID))
		if b == nil {
			return NotFound("applicant", extID)
		}
		out = append(make([]byte, 0, len(b)+1), b...)
		return nil
	})
	return out, err
}

// ApplicantFilter selects applicants; empty fields match everything.
type ApplicantFilter struct {
	Status       string
	ReviewStatus string
	Type         string // individual or company (the console's filter)
	// Query keeps applicants whose externalUserId, first, middle or last
	// name, company name, email or registration number contains it, or
	// whose applicant id it is, case-insensitive (the console's search).
	Query string
}

// Applicants lists applicants newest first, reading the filter indexes (a
// page reads O(limit) records). With a Query the page reads at most
// SearchSlice records and may come back short with a cursor to continue.
// Returns EINVALID for an unknown filter value.
func (s *Store) Applicants(env Env, f ApplicantFilter, p Page) ([]Applicant, *string, error) {
	switch f.Status {
	case "", StatusActive, StatusDeactivated, StatusBlocklisted:
	default:
		return nil, nil, Invalid("status", "status must be active, deactivated or blocklisted")
	}
	if f.ReviewStatus != "" && !inList(reviewStatuses(), f.ReviewStatus) {
		return nil, nil, Invalid("reviewStatus", "reviewStatus must be one of %s", strings.Join(reviewStatuses(), ", "))
	}
	switch f.Type {
	case "", TypeIndividual, TypeCompany:
	default:
		return nil, nil, Invalid("type", "type must be individual or company")
	}
	query := strings.ToLower(strings.TrimSpace(f.Query))
	scan := listScan{kind: cursorKind{listApplicants, env}, keys: f.keys()}
	if query != "" {
		scan.budget = SearchSlice
	}
	out := []Applicant{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		scan.seqs, scan.filters, scan.log = t.env(env, "applicants_idx"), t.env(env, "applicants_bits"), t.logOf(env, "applicants_bits")
		var err error
		next, err = scan.run(p, func(_ uint64, id []byte) (bool, error) {
			a, err := t.listApplicant(env, string(id))
			if err != nil {
				return false, err
			}
			if (f.Status != "" && a.Status != f.Status) || (f.ReviewStatus != "" && a.Review.ReviewStatus != f.ReviewStatus) ||
				(f.Type != "" && a.Type != f.Type) || (query != "" && !a.matches(query)) {
				return false, nil
			}
			out = append(out, a.view())
			return true, nil
		})
		return err
	})
	return out, next, err
}

// SearchSlice is the most records one page of a free-text search reads. A
// search that has not filled its page by then answers the matches so far
// and a cursor to continue, so no request holds a read transaction for
// long, whatever the data size.
const SearchSlice = 1000

// keys returns the filter-index keys the filter's fields select.
func (f ApplicantFilter) keys() []fkey {
	var keys []fkey
	if f.Status != "" {
		keys = append(keys, fkey{fApplicantStatus, f.Status})
	}
	if f.ReviewStatus != "" {
		keys = append(keys, fkey{fApplicantReviewStatus, f.ReviewStatus})
	}
	if f.Type != "" {
		keys = append(keys, fkey{fApplicantType, f.Type})
	}
	return keys
}

// listApplicant reads an applicant for a list, counting the decode.
func (t *txn) listApplicant(env Env, extID string) (*diskApplicant, error) {
	t.s.listDecodes.Add(1)
	return t.getApplicant(env, extID)
}

// modify runs fn on the applicant extID inside one update and answers the
// applicant as fn left it. fn stores its changes itself. Returns ENOTFOUND,
// and ECONFLICT applicant_erased for an erased applicant, on which every
// action is refused: only reads remain.
func (s *Store) modify(env Env, extID string, fn func(t *txn, a *diskApplicant) error) (Applicant, error) {
	var out Applicant
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if a.erased() {
			// Only reads remain (Erase, the one change an erased
			// applicant takes, does not come through here).
			return Conflict("applicant_erased", "applicant %q was erased", extID)
		}
		if err := fn(t, a); err != nil {
			return err
		}
		out = a.view()
		return nil
	})
	return out, err
}

// PatchApplicant changes data fields: a string replaces the value and locks
// the field, null clears and unlocks it. Fields the level does not enable are
// dropped. Returns ENOTFOUND, EINVALID naming the field, ECONFLICT
// review_in_progress for a company country while a review is in flight.
func (s *Store) PatchApplicant(env Env, extID string, in ApplicantInput) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		return t.patchFields(env, a, in)
	})
}

func (t *txn) patchFields(env Env, a *diskApplicant, in ApplicantInput) error {
	if err := a.acceptsEdits(); err != nil {
		return err
	}
	if err := a.waitsForOwners(); err != nil {
		return err // it would close over fields nobody reviewed (SPEC §3.6)
	}
	lvl, err := t.applicantLevel(env, a)
	if err != nil {
		return err
	}
	type change struct {
		field, value string
		clear        bool
	}
	var changes []change
	for _, f := range lvl.enabledFields() {
		raw, present := in[f]
		if !present {
			continue
		}
		v, ok, err := jsonString(f, raw)
		if err != nil {
			return err
		}
		if !ok {
			changes = append(changes, change{field: f, clear: true})
			continue
		}
		if v, err = normalizeField(f, v, t.now); err != nil {
			return err
		}
		changes = append(changes, change{field: f, value: v})
	}
	changed := []string{}
	for _, c := range changes {
		old, had := a.Fields[c.field]
		if c.field == "country" && a.Type == TypeCompany && a.inFlight() && (c.clear || old != c.value) {
			return Conflict("review_in_progress", "country cannot change while a verification is in flight; reset the applicant first")
		}
		if c.clear {
			if had || inList(a.Locked, c.field) {
				changed = append(changed, c.field)
			}
			delete(a.Fields, c.field)
			a.unlock(c.field)
			continue
		}
		if !had || old != c.value || !inList(a.Locked, c.field) {
			changed = append(changed, c.field)
		}
		if a.Fields == nil {
			a.Fields = map[string]string{}
		}
		a.Fields[c.field] = c.value
		a.lock(c.field)
	}
	if len(changed) == 0 {
		return nil
	}
	if err := t.save(env, a); err != nil {
		return err
	}
	if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
		Details: map[string]any{"fields": changed}}); err != nil {
		return err
	}
	if env == Production && a.Review.ReviewStatus == ReviewAwaiting {
		// The operator decides on these findings: run the automatic checks
		// again on the data as it is now (age, sanctions), so none reads
		// "OK" next to a name or date of birth it never saw; the partner's
		// aml.run says what the screening of the new name found.
		aml, err := t.productionChecks(env, a)
		if err != nil {
			return err
		}
		if a.hasStep(StepAML) {
			if err := t.screen(env, a, []string{StepAML}, aml); err != nil {
				return err
			}
		}
	}
	return t.event(env, a, "applicantPersonalInfoChanged", map[string]any{"fields": changed})
}

// applicantLevel returns the level of a.
func (t *txn) applicantLevel(env Env, a *diskApplicant) (Level, error) {
	d, err := t.getLevel(env, a.Level)
	if err != nil {
		// The level was renamed or removed after use: its steps live on in
		// the applicant; collect nothing new.
		return Level{Name: a.Level, ApplicantType: a.Type}.normalized(), nil
	}
	// The applicant keeps the steps its level had when assigned: data is
	// taken for those, and only those, after the level's steps are edited
	// (assigning the level again takes the edit). Everything else of the
	// level (fields, questions, documents) is the level's now.
	l := d.Level
	l.Steps = make([]LevelStep, len(a.Steps))
	for i, st := range a.Steps {
		l.Steps[i] = LevelStep{Kind: st.Kind, Optional: st.Optional}
	}
	return l, nil
}

// sameSteps reports whether the applicant's steps are those of level l.
func (a *diskApplicant) sameSteps(l Level) bool {
	return slices.EqualFunc(a.Steps, l.Steps, func(s Step, ls LevelStep) bool {
		return s.Kind == ls.Kind && s.Optional == ls.Optional
	})
}

func (a *diskApplicant) erased() bool { return !a.ErasedAt.IsZero() }

// CompanyInfo is the company-info body of seed 2.7.
type CompanyInfo struct {
	ExternalUserID        string     `json:"externalUserId"`
	CompanyName           NullString `json:"companyName"`
	RegistrationNumber    NullString `json:"registrationNumber"`
	LegalForm             NullString `json:"legalForm"`
	IncorporationDate     NullString `json:"incorporationDate"`
	RegisteredAddress     NullString `json:"registeredAddress"`
	Country               NullString `json:"country"`
	Email                 NullString `json:"email"`
	Phone                 NullString `json:"phone"`
	Status                string     `json:"status"`
	RiskLevel             string     `json:"riskLevel"`
	VerificationLevelName string     `json:"verificationLevelName"`
	LockedFields          []string   `json:"lockedFields"`
	CreatedAtUtc          Time       `json:"createdAtUtc"`
	UpdatedAtUtc          Time       `json:"updatedAtUtc"`
}

func (a *diskApplicant) companyInfo() CompanyInfo {
	f := func(name string) NullString { return NullString(a.Fields[name]) }
	locked := a.Locked
	if locked == nil {
		locked = []string{}
	}
	return CompanyInfo{
		ExternalUserID: a.ExternalID, CompanyName: f("companyName"), RegistrationNumber: f("registrationNumber"),
		LegalForm: f("legalForm"), IncorporationDate: f("incorporationDate"), RegisteredAddress: f("registeredAddress"),
		Country: f("country"), Email: f("email"), Phone: f("phone"), Status: a.Status, RiskLevel: a.RiskLevel,
		VerificationLevelName: a.Level, LockedFields: locked, CreatedAtUtc: a.CreatedAt, UpdatedAtUtc: a.UpdatedAt,
	}
}

func notCompany(a *diskApplicant) error {
	if a.Type != TypeCompany {
		return &Error{Code: EINVALID, Reason: "not_a_company", Field: "externalUserId",
			Message: "applicant " + a.ExternalID + " is an individual; company-info exists only for companies"}
	}
	return nil
}

// CompanyInfo returns a company applicant's company data. Returns ENOTFOUND
// and EINVALID not_a_company for an individual.
func (s *Store) CompanyInfo(env Env, extID string) (CompanyInfo, error) {
	var out CompanyInfo
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if err := notCompany(a); err != nil {
			return err
		}
		out = a.companyInfo()
		return nil
	})
	return out, err
}

// PatchCompanyInfo changes company fields like PatchApplicant. Returns
// ENOTFOUND, EINVALID (not_a_company, or naming a field) and ECONFLICT
// review_in_progress for country while a verification is in flight.
func (s *Store) PatchCompanyInfo(env Env, extID string, in ApplicantInput) (CompanyInfo, error) {
	var out CompanyInfo
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if err := notCompany(a); err != nil {
			return err
		}
		if err := t.patchFields(env, a, in); err != nil {
			return err
		}
		out = a.companyInfo()
		return nil
	})
	return out, err
}

// orEmpty returns s, or an empty list for nil: a list in a history entry's
// details is [] when empty, as in the API's records.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
