package store

import (
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The hosted verification UI (SPEC §3.8) acts for the applicant with the
// session token as its only credential. Its store methods find the session
// and the applicant by token, reuse the verification machinery (field
// validation, addDocument, checkAnswers, submit) and record every call as an
// sdk history entry.

// SDKApplicant is what the hosted UI shows of its applicant.
type SDKApplicant struct {
	ID             string `json:"id"`
	ExternalUserID string `json:"externalUserId"`
	Type           string `json:"type"`
	LevelName      string `json:"levelName"`
	Status         string `json:"status"`
}

// SDKStep is a step of the level with its progress.
type SDKStep struct {
	Kind             string     `json:"kind"`
	Optional         bool       `json:"optional"`
	Automatic        bool       `json:"automatic"` // aml, adverse_media: run by themselves at submission
	HasData          bool       `json:"hasData"`
	ReviewStatus     string     `json:"reviewStatus"`
	ReviewAnswer     NullString `json:"reviewAnswer"`
	ReviewRejectType NullString `json:"reviewRejectType"`
}

// SDKField is a data field the level collects.
type SDKField struct {
	Name     string  `json:"name"`
	Value    *string `json:"value"`
	Locked   bool    `json:"locked"`
	Required bool    `json:"required"`
}

// SDKQuestion is a question of the level with the applicant's answer.
type SDKQuestion struct {
	Question
	Answer json.RawMessage `json:"answer"`
}

// SDKDocument is an uploaded document as the hosted UI lists it.
type SDKDocument struct {
	Kind          string     `json:"kind"`
	Side          NullString `json:"side"`
	DocType       NullString `json:"docType"`
	ContentType   string     `json:"contentType"`
	UploadedAtUtc Time       `json:"uploadedAtUtc"`
}

// SDKVerdict is the applicant's verdict once there is one.
type SDKVerdict struct {
	ReviewAnswer      string     `json:"reviewAnswer"`
	ReviewRejectType  NullString `json:"reviewRejectType"`
	RejectLabels      []string   `json:"rejectLabels"`
	ModerationComment NullString `json:"moderationComment"`
	ReviewedAtUtc     Time       `json:"reviewedAtUtc"`
	Final             bool       `json:"final"` // GREEN, or RED FINAL: nothing more to upload
}

// SDKState is the body of GET /api/v1/sdk/state and what the hosted page
// renders.
type SDKState struct {
	Applicant                SDKApplicant  `json:"applicant"`
	Lang                     string        `json:"lang"`
	Theme                    string        `json:"theme"`
	ReturnURL                NullString    `json:"returnUrl"`
	ExpiresAt                Time          `json:"expiresAt"`
	ReviewStatus             string        `json:"reviewStatus"`
	InReview                 bool          `json:"inReview"`    // submitted, waiting for the verdict
	AcceptsData              bool          `json:"acceptsData"` // uploads and edits are possible now
	Steps                    []SDKStep     `json:"steps"`
	Fields                   []SDKField    `json:"fields"`
	Questionnaire            []SDKQuestion `json:"questionnaire"`
	CompanyRequiredDocuments []string      `json:"companyRequiredDocuments"`
	Documents                []SDKDocument `json:"documents"`
	Ubos                     []SDKUbo      `json:"ubos"`    // a company's beneficial-owner rows; empty for an individual
	Missing                  []string      `json:"missing"` // required steps that still need data
	Verdict                  *SDKVerdict   `json:"verdict"`
	RedirectURL              NullString    `json:"redirectUrl"` // returnUrl with externalUserId and reviewAnswer, once there is a verdict
}

// SDKUbo is a company's beneficial-owner row as the hosted UI shows it: the
// row without its child's link, which is a credential of another person.
type SDKUbo struct {
	UboIndex         int         `json:"uboIndex"`
	FullName         string      `json:"fullName"`
	DateOfBirth      NullString  `json:"dateOfBirth"`
	OwnershipPercent json.Number `json:"ownershipPercent"`
	Roles            []string    `json:"roles"`
	Email            NullString  `json:"email"`
	Nationality      NullString  `json:"nationality"`
	Source           string      `json:"source"`
	EnrollmentStatus string      `json:"enrollmentStatus"`
	CreatedAtUtc     Time        `json:"createdAtUtc"`
}

func sdkUbo(r UboRow) SDKUbo {
	return SDKUbo{UboIndex: r.UboIndex, FullName: r.FullName, DateOfBirth: r.DateOfBirth, OwnershipPercent: r.OwnershipPercent,
		Roles: r.Roles, Email: r.Email, Nationality: r.Nationality, Source: r.Source, EnrollmentStatus: r.EnrollmentStatus,
		CreatedAtUtc: r.CreatedAtUtc}
}

// UboRoles lists the roles of a beneficial-owner row (for the hosted UI's
// choice).
func UboRoles() []string { return uboRoles() }

// sdkSession finds a live session by token and its applicant and level.
// Returns EUNAUTHORIZED invalid_token for an unknown token and EGONE
// session_expired for an expired one.
func (t *txn) sdkSession(token string) (Session, *diskApplicant, Level, error) {
	if token == "" {
		return Session{}, nil, Level{}, Errorf(EUNAUTHORIZED, "invalid_token", "unknown verification session")
	}
	for _, e := range Envs() {
		x, ok, err := t.getSession(e, token)
		if err != nil {
			return x, nil, Level{}, err
		}
		if !ok {
			continue
		}
		if !t.now.Before(x.ExpiresAt.Time) {
			return x, nil, Level{}, Errorf(EGONE, "session_expired", "this verification link has expired")
		}
		a, err := t.getApplicant(e, x.ExternalUserID)
		if err != nil {
			return x, nil, Level{}, err
		}
		l, err := t.applicantLevel(e, a)
		return x, a, l, err
	}
	return Session{}, nil, Level{}, Errorf(EUNAUTHORIZED, "invalid_token", "unknown verification session")
}

// sdkRequired reports the data fields the hosted UI asks for before it
// moves on: a company level's required fields, a person's names and date of
// birth where the level collects them.
func sdkRequired(l Level) []string {
	if l.ApplicantType == TypeCompany {
		return l.CompanyRequiredFields
	}
	var out []string
	for _, f := range []string{"firstName", "lastName", "dateOfBirth"} {
		if inList(l.PersonalInfoFields, f) {
			out = append(out, f)
		}
	}
	return out
}

// sdkState renders the state of session x.
func sdkState(x Session, a *diskApplicant, l Level) SDKState {
	v := SDKState{
		Applicant: SDKApplicant{ID: a.ID, ExternalUserID: a.ExternalID, Type: a.Type, LevelName: a.Level, Status: a.Status},
		Lang:      x.Lang, Theme: x.Theme, ReturnURL: NullString(x.ReturnURL), ExpiresAt: x.ExpiresAt,
		ReviewStatus: a.Review.ReviewStatus, InReview: a.sdkWaiting(), AcceptsData: a.acceptsData() == nil,
		Steps: []SDKStep{}, Fields: []SDKField{}, Questionnaire: []SDKQuestion{}, Documents: []SDKDocument{},
		CompanyRequiredDocuments: append([]string{}, l.CompanyRequiredDocuments...), Missing: []string{}, Ubos: []SDKUbo{},
	}
	if rows := a.uboView(); rows != nil {
		for _, r := range *rows {
			v.Ubos = append(v.Ubos, sdkUbo(r))
		}
	}
	if v.CompanyRequiredDocuments == nil {
		v.CompanyRequiredDocuments = []string{}
	}
	for _, st := range a.Steps {
		enough := a.hasData(st.Kind, l) // for submission
		s := SDKStep{Kind: st.Kind, Optional: st.Optional, Automatic: screeningStep(st.Kind), HasData: enough,
			ReviewStatus: st.ReviewStatus, ReviewAnswer: st.ReviewAnswer, ReviewRejectType: st.ReviewRejectType}
		if st.Kind == StepQuestionnaire {
			s.HasData = a.Answers != nil || len(l.Questionnaire) == 0 // answered, even if every question is optional
		}
		v.Steps = append(v.Steps, s)
		needs := st.retry() || ((st.ReviewStatus == ReviewPending || st.ReviewStatus == ReviewExpired) && !enough)
		if !st.Optional && !s.Automatic && needs {
			v.Missing = append(v.Missing, st.Kind)
		}
	}
	required := sdkRequired(l)
	for _, f := range l.enabledFields() {
		fv := SDKField{Name: f, Locked: inList(a.Locked, f), Required: inList(required, f)}
		if val, ok := a.Fields[f]; ok {
			fv.Value = &val
		}
		v.Fields = append(v.Fields, fv)
	}
	if _, ok := l.step(StepQuestionnaire); ok {
		for _, q := range l.Questionnaire {
			sq := SDKQuestion{Question: q, Answer: json.RawMessage("null")}
			if sq.Options == nil {
				sq.Options = []string{}
			}
			if raw, ok := a.Answers[q.ID]; ok && !isNull(raw) {
				sq.Answer = raw
			}
			v.Questionnaire = append(v.Questionnaire, sq)
		}
	}
	for _, d := range a.Documents {
		v.Documents = append(v.Documents, SDKDocument{Kind: d.Kind, Side: d.Side, DocType: d.DocType,
			ContentType: d.ContentType, UploadedAtUtc: d.UploadedAtUtc})
	}
	if r := a.Review; r.ReviewStatus == ReviewCompleted && r.ReviewAnswer != "" {
		labels := append([]string{}, r.RejectLabels...)
		v.Verdict = &SDKVerdict{ReviewAnswer: string(r.ReviewAnswer), ReviewRejectType: r.ReviewRejectType,
			RejectLabels: labels, ModerationComment: r.ModerationComment, ReviewedAtUtc: r.ReviewedAtUtc, Final: r.terminal()}
		if x.ReturnURL != "" {
			v.RedirectURL = NullString(returnWithVerdict(x.ReturnURL, a.ExternalID, string(r.ReviewAnswer)))
		}
	}
	return v
}

// sdkWaiting reports whether the applicant waits for a verdict: submitted,
// held for an operator, or (a company) waiting for its children.
func (a *diskApplicant) sdkWaiting() bool {
	return a.InReview || a.Review.ReviewStatus == ReviewInReview || a.Review.ReviewStatus == ReviewAwaiting
}

// returnWithVerdict appends externalUserId and reviewAnswer to the query of
// the partner's returnUrl, after its own parameters, which keep their order
// and spelling (a parameter of the same name as ours is replaced).
func returnWithVerdict(raw, extID, answer string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	var parts []string
	for _, p := range strings.Split(u.RawQuery, "&") {
		name, _, _ := strings.Cut(p, "=")
		if n, err := url.QueryUnescape(name); p == "" || (err == nil && (n == "externalUserId" || n == "reviewAnswer")) {
			continue
		}
		parts = append(parts, queryPart(p))
	}
	parts = append(parts, "externalUserId="+url.QueryEscape(extID), "reviewAnswer="+url.QueryEscape(answer))
	u.RawQuery = strings.Join(parts, "&")
	u.ForceQuery = false
	return u.String()
}

// queryPart percent-encodes the bytes a URI query may not hold (RFC 3986),
// so the redirect is a valid URI whatever the partner's returnUrl held.
func queryPart(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c > ' ' && c < 0x7f && !strings.ContainsRune("\"<>\\^`{|}", rune(c)) {
			b.WriteByte(c)
			continue
		}
		b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)|0x100, 16)[1:]))
	}
	return b.String()
}

// sdkCall runs fn on the session's applicant in one update; fn records its
// own history. The answer is the state as fn left it.
func (s *Store) sdkCall(token string, fn func(t *txn, x Session, a *diskApplicant, l Level) error) (SDKState, error) {
	var out SDKState
	err := s.update(func(t *txn) error {
		x, a, l, err := t.sdkSession(token)
		if err != nil {
			return err
		}
		if err := fn(t, x, a, l); err != nil {
			return err
		}
		out = sdkState(x, a, l)
		return nil
	})
	return out, err
}

// SDKView returns the state of a session for rendering the hosted page; it
// records nothing. Returns EUNAUTHORIZED for an unknown token and EGONE
// for an expired one.
func (s *Store) SDKView(token string) (SDKState, error) {
	var out SDKState
	err := s.view(func(t *txn) error {
		x, a, l, err := t.sdkSession(token)
		if err != nil {
			return err
		}
		out = sdkState(x, a, l)
		return nil
	})
	return out, err
}

// SDKState returns the state of a session for GET /api/v1/sdk/state and
// records the read as an internal sdk entry. Returns EUNAUTHORIZED for an
// unknown token and EGONE for an expired one.
func (s *Store) SDKState(token string) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		return t.sdkInternal(x, a, "sdk.state_read", nil)
	})
}

// sdkInternal records an internal hosted-UI entry.
func (t *txn) sdkInternal(x Session, a *diskApplicant, eventType string, details map[string]any) error {
	return t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: eventType, ActorType: ActorSDK, Details: details, Internal: true})
}

// sdkUpdated records a partner-visible applicant.updated entry by sdk: the
// applicant gave data in the hosted UI (SPEC §3.8: each call is an sdk
// history event; a read has no partner-visible event type and is internal).
func (t *txn) sdkUpdated(x Session, a *diskApplicant, details map[string]any) error {
	return t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSDK, Details: details})
}

// SDKPersonalInfo changes data fields from the hosted UI: a string sets the
// field, null clears it. Values set here stay editable (they are not
// locked). Returns EUNAUTHORIZED, EGONE, EINVALID naming a field the level
// does not collect or a bad value (the rules of POST /v1/applicants),
// ELOCKED field_locked naming a locked field whose value would change, and
// ECONFLICT when the applicant takes no data now.
func (s *Store) SDKPersonalInfo(token string, in map[string]json.RawMessage) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		enabled := l.enabledFields()
		names := make([]string, 0, len(in))
		for f := range in {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, f := range names {
			if !inList(enabled, f) {
				return Invalid(f, "level %s does not collect %s; it collects %s", l.Name, f, strings.Join(enabled, ", "))
			}
		}
		type change struct {
			field, value string
			set          bool
		}
		var changes []change
		for _, f := range enabled {
			raw, present := in[f]
			if !present {
				continue
			}
			v, set, err := jsonString(f, raw)
			if err == nil && set {
				v, err = normalizeField(f, v, t.now)
			}
			old, had := a.Fields[f]
			if inList(a.Locked, f) {
				if err != nil || set != had || v != old {
					return &Error{Code: ELOCKED, Reason: "field_locked", Field: f,
						Message: f + " was set by the partner and is locked; it cannot change here"}
				}
				continue
			}
			if err != nil {
				return err
			}
			if set != had || v != old {
				changes = append(changes, change{field: f, value: v, set: set})
			}
		}
		if err := a.acceptsData(); err != nil {
			return err
		}
		if len(changes) == 0 {
			return t.sdkInternal(x, a, "sdk.personal_info_unchanged", nil)
		}
		changed := []string{}
		for _, c := range changes {
			changed = append(changed, c.field)
			if !c.set {
				delete(a.Fields, c.field)
				continue
			}
			if a.Fields == nil {
				a.Fields = map[string]string{}
			}
			a.Fields[c.field] = c.value
		}
		if err := t.save(x.Env, a); err != nil {
			return err
		}
		if err := t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSDK,
			Details: map[string]any{"fields": changed}}); err != nil {
			return err
		}
		return t.event(x.Env, a, "applicantPersonalInfoChanged", map[string]any{"fields": changed})
	})
}

// SDKFile is one uploaded file of a hosted-UI upload. Field names the
// multipart part, for errors; Side is front or back for identity_doc.
type SDKFile struct {
	Field string
	Side  string
	Data  []byte
}

// SDKUpload is one hosted-UI upload: files for one step.
type SDKUpload struct {
	Kind    string
	Side    string // default side of files that carry none (identity_doc)
	DocType string
	Files   []SDKFile
}

// Liveness frames per upload.
const (
	MinLivenessFrames = 3
	MaxLivenessFrames = 20
)

// check validates an upload against level l and checks its images (the
// rules of POST …/documents). Returns the uploads to store; EINVALID
// naming the field.
func (in SDKUpload) check(l Level) ([]upload, error) {
	kinds := []string{}
	for _, st := range l.Steps {
		if documentStep(st.Kind) {
			kinds = append(kinds, st.Kind)
		}
	}
	if !inList(kinds, in.Kind) {
		return nil, Invalid("kind", "kind must be a document step of level %s: %s", l.Name, strings.Join(kinds, ", "))
	}
	switch in.Kind {
	case StepIdentityDoc:
		if in.DocType != "" && !inList(idDocTypes(), in.DocType) {
			return nil, Invalid("docType", "docType must be one of %s", strings.Join(idDocTypes(), ", "))
		}
	case StepCompanyDocs:
		if !validDocType(in.DocType) {
			return nil, Invalid("docType", "docType is required for company_docs, e.g. certificate_of_incorporation")
		}
	default:
		if in.DocType != "" && !validDocType(strings.ToLower(in.DocType)) {
			return nil, Invalid("docType", "docType must be 1-64 characters of a-z0-9_")
		}
	}
	if len(in.Files) == 0 {
		return nil, Invalid("file", "file is required")
	}
	if in.Kind == StepLiveness && (len(in.Files) < MinLivenessFrames || len(in.Files) > MaxLivenessFrames) {
		return nil, Invalid("file", "liveness needs %d to %d frames in one upload", MinLivenessFrames, MaxLivenessFrames)
	}
	sides := map[string]bool{}
	var out []upload
	for _, f := range in.Files {
		side := f.Side
		if side == "" {
			side = in.Side
		}
		if in.Kind == StepIdentityDoc {
			if side == "" {
				side = "front"
			}
			if side != "front" && side != "back" {
				return nil, Invalid("side", "side must be front or back")
			}
		} else if side != "" {
			return nil, Invalid("side", "side applies only to identity_doc")
		}
		if in.Kind != StepLiveness {
			if sides[side] {
				return nil, Invalid(f.Field, "one file per upload (per side of an identity document)")
			}
			sides[side] = true
		}
		img, err := checkImage(f.Field, f.Data, in.Kind != StepSelfie && in.Kind != StepLiveness)
		if err != nil {
			return nil, err
		}
		out = append(out, upload{kind: in.Kind, side: side, docType: in.DocType, img: img})
	}
	return out, nil
}

// SDKAddDocuments stores the files of one step uploaded in the hosted UI,
// replacing a document of the same kind and side; a liveness upload
// replaces the earlier frames. Images are checked before the write.
// Returns EUNAUTHORIZED, EGONE, EINVALID naming the field and ECONFLICT
// when the applicant takes no data now.
func (s *Store) SDKAddDocuments(token string, in SDKUpload) (SDKState, error) {
	var l Level
	err := s.view(func(t *txn) error {
		var err error
		_, _, l, err = t.sdkSession(token)
		return err
	})
	if err != nil {
		return SDKState{}, err
	}
	ups, err := in.check(l)
	if err != nil {
		return SDKState{}, err
	}
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		if err := a.acceptsData(); err != nil {
			return err
		}
		if in.Kind == StepLiveness {
			if err := t.dropDocuments(x.Env, a, func(d Document) bool { return d.Kind == StepLiveness }); err != nil {
				return err
			}
		}
		hashes := []string{}
		for _, u := range ups {
			if err := t.addDocument(x.Env, a, l, u); err != nil {
				return err
			}
			hashes = append(hashes, u.img.SHA256)
		}
		if err := t.save(x.Env, a); err != nil {
			return err
		}
		return t.sdkUpdated(x, a, map[string]any{"action": "documents.uploaded", "kind": in.Kind, "docType": NullString(in.DocType), "sha256": hashes})
	})
}

// SDKAnswers stores the questionnaire answers given in the hosted UI.
// Returns EUNAUTHORIZED, EGONE, EINVALID naming questionnaire.<id> (the
// rules of POST …/verify) and ECONFLICT when the applicant takes no data.
func (s *Store) SDKAnswers(token string, answers map[string]json.RawMessage) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		if _, ok := l.step(StepQuestionnaire); !ok {
			return Invalid("questionnaire", "level %s has no questionnaire", l.Name)
		}
		if answers == nil {
			answers = map[string]json.RawMessage{}
		}
		if err := checkAnswers(l, answers); err != nil {
			return err
		}
		if err := a.acceptsData(); err != nil {
			return err
		}
		a.Answers = answers
		a.dataArrived(StepQuestionnaire, l, t.now)
		if err := t.save(x.Env, a); err != nil {
			return err
		}
		return t.sdkUpdated(x, a, map[string]any{"action": "questionnaire.answered", "questions": len(answers)})
	})
}

// SDKSubmit sends the applicant to review from the hosted UI, as POST
// …/review does (the sandbox reviewer after review_delay, in production the
// automatic checks and an operator); history records enrollment.submitted
// by sdk. Returns EUNAUTHORIZED, EGONE and ECONFLICT (missing_step_data
// when a required step has no data).
func (s *Store) SDKSubmit(token string) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		t.retag = func(h *HistoryEntry) {
			if h.ActorType == ActorPartner {
				h.ActorType = ActorSDK
			}
			if h.EventType == "applicant.sent_to_review" {
				h.EventType = "enrollment.submitted"
			}
		}
		defer func() { t.retag = nil }()
		return t.submit(x.Env, a, l, false)
	})
}

// SDKUboAdded is the answer of POST /api/v1/sdk/ubos: the session's state
// with the new row and its index.
type SDKUboAdded struct {
	SDKState
	UboIndex int    `json:"uboIndex"`
	Row      SDKUbo `json:"row"`
}

// SDKAddUbo appends a beneficial-owner row with source sdk to the
// session's company while it takes data (before submission, or after a
// RETRY), validated as POST /v1/applicants/{id}/ubos validates it; history
// applicant.updated by sdk. The check and the append are one transaction.
// Returns EUNAUTHORIZED, EGONE, EINVALID not_a_company for an individual or
// naming the field, and ECONFLICT when the applicant takes no data now (in
// review, rejected for good) or too_many_ubos.
func (s *Store) SDKAddUbo(token string, in UboInput) (SDKUboAdded, error) {
	var added UboAdded
	st, err := s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, _ Level) error {
		if a.Type != TypeCompany {
			return &Error{Code: EINVALID, Reason: "not_a_company",
				Message: "this verification is for an individual; beneficial-owner rows exist only for companies"}
		}
		if err := a.acceptsData(); err != nil {
			return err
		}
		i, err := a.appendUbo(in, "", SourceSDK, t.now)
		if err != nil {
			return err
		}
		if err := t.saveCompany(x.Env, a); err != nil {
			return err
		}
		added = UboAdded{UboIndex: i, Row: a.Ubos[i].view(i)}
		return t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSDK,
			Details: map[string]any{"action": "ubo.added", "uboIndex": i, "roles": a.Ubos[i].Roles, "source": SourceSDK}})
	})
	if err != nil {
		return SDKUboAdded{}, err
	}
	return SDKUboAdded{SDKState: st, UboIndex: added.UboIndex, Row: sdkUbo(added.Row)}, nil
}

// LegalForms lists the accepted values of legalForm, lower case (for the
// hosted UI's choice).
func LegalForms() []string { return legalForms() }

// IDDocTypes lists the identity document types.
func IDDocTypes() []string { return idDocTypes() }
