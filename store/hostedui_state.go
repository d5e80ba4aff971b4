package store

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// RejectLabels and ModerationComment say why a RED step was rejected,
	// so the page can tell the applicant what to redo.
	RejectLabels      []string   `json:"rejectLabels"`
	ModerationComment NullString `json:"moderationComment"`
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
	Country       NullString `json:"country"` // an identity document's issuing country
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
	RedirectURL              NullString    `json:"redirectUrl"`       // returnUrl with externalUserId and reviewAnswer, once there is a verdict
	ConsentGivenAtUtc        Time          `json:"consentGivenAtUtc"` // null until the applicant accepts the intro's consent line
	// OwnersOpen is, while a company's own steps are reviewed and its
	// verdict waits for its beneficial owners (SPEC §3.6), how many of
	// its rows have no final verdict yet (the hosted page's count); nil
	// otherwise.
	OwnersOpen *int `json:"ownersOpen"`
	// ParentCompanyName is, for a beneficial owner spawned from a
	// company's row, the company's name, so the hosted page can say whom
	// the owner verifies for; "" otherwise. SDKView fills it; it is not
	// part of the page API's body.
	ParentCompanyName string `json:"-"`
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
		t.enter(e)
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
		ReviewStatus: a.Review.ReviewStatus, InReview: a.sdkWaiting(), AcceptsData: a.acceptsStepData() == nil,
		Steps: []SDKStep{}, Fields: []SDKField{}, Questionnaire: []SDKQuestion{}, Documents: []SDKDocument{},
		CompanyRequiredDocuments: append([]string{}, l.CompanyRequiredDocuments...), Missing: []string{}, Ubos: []SDKUbo{},
		ConsentGivenAtUtc: a.ConsentAt,
	}
	if rows := a.uboView(); rows != nil {
		for _, r := range *rows {
			v.Ubos = append(v.Ubos, sdkUbo(r))
		}
	}
	if a.awaitsOwners() {
		n := 0
		for _, r := range v.Ubos {
			if r.EnrollmentStatus != EnrollmentCompleted && r.EnrollmentStatus != EnrollmentRejected {
				n++
			}
		}
		v.OwnersOpen = &n
	}
	if v.CompanyRequiredDocuments == nil {
		v.CompanyRequiredDocuments = []string{}
	}
	for _, st := range a.Steps {
		enough := a.hasData(st.Kind, l) // for submission
		s := SDKStep{Kind: st.Kind, Optional: st.Optional, Automatic: screeningStep(st.Kind), HasData: enough,
			ReviewStatus: st.ReviewStatus, ReviewAnswer: st.ReviewAnswer, ReviewRejectType: st.ReviewRejectType,
			RejectLabels: append([]string{}, st.RejectLabels...), ModerationComment: st.ModerationComment}
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
		v.Documents = append(v.Documents, SDKDocument{Kind: d.Kind, Side: d.Side, DocType: d.DocType, Country: d.Country,
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
		out.ParentCompanyName = t.parentCompanyName(x.Env, a)
		return nil
	})
	return out, err
}

// parentCompanyName returns the companyName of the company whose row
// spawned a, "" when a has no parent or the parent cannot be read.
func (t *txn) parentCompanyName(env Env, a *diskApplicant) string {
	if a.UboParent == "" {
		return ""
	}
	p, err := t.getApplicant(env, a.UboParent)
	if err != nil {
		return ""
	}
	return p.Fields["companyName"]
}

// SDKState returns the state of a session for GET /api/v1/sdk/state and
// records the read as an internal sdk entry. Returns EUNAUTHORIZED for an
// unknown token and EGONE for an expired one.
func (s *Store) SDKState(token string) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		return t.sdkInternal(x, a, "sdk.state_read", nil)
	})
}

// maxRefusedName bounds, in bytes, each name a refused call's entry keeps.
const maxRefusedName = 200

// clip cuts s to at most n bytes, at a character boundary, marking a cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

// SDKRefused records, as an internal sdk entry (sdk.call_refused), a
// call of the page API that the session's token authorised but that was
// refused (SPEC §3.8: each call is an sdk history event): call names it
// ("POST /api/v1/sdk/personal-info"), refusal is its error. The refused
// call changed nothing, so the entry has a transaction of its own. A token
// that no longer names a live session records nothing.
func (s *Store) SDKRefused(token, call string, refusal error) error {
	e := AsError(refusal)
	// A refused field's name is the caller's: kept to a length that
	// says which one, so that a call cannot store a megabyte.
	details := map[string]any{"call": clip(call, maxRefusedName), "code": clip(e.Reason, maxRefusedName)}
	if e.Field != "" {
		details["field"] = clip(e.Field, maxRefusedName)
	}
	return s.update(func(t *txn) error {
		x, a, _, err := t.sdkSession(token)
		if err != nil {
			return nil
		}
		return t.sdkInternal(x, a, "sdk.call_refused", details)
	})
}

// SDKLook is the language and theme a session's pages are shown in.
type SDKLook struct {
	Lang, Theme string
	// Settled: the applicant has nothing left to do on any link: it was
	// sent to review, or its verdict is final (GREEN or RED FINAL).
	Settled bool
	// Erased: the applicant was erased, and no new link can be made for it.
	Erased bool
}

// settled reports whether a waits for nothing from the applicant: its data
// is in review (sent, or a company's waiting for its owners) or its
// verdict is final. A RETRY, a pending or an expired applicant is not.
func (a *diskApplicant) settled() bool {
	r := a.Review
	return a.InReview || r.terminal() || r.ReviewStatus == ReviewInReview || r.ReviewStatus == ReviewAwaiting
}

// SDKLinkLook returns the language and theme of the session that token (or,
// when token is empty, the short code) names, whether it expired or not, so
// that the page saying a link is gone speaks the session's language, and
// whether its applicant is settled, so that it says whether a new link is
// needed. ok is false when neither names a session.
func (s *Store) SDKLinkLook(token, code string) (look SDKLook, ok bool, err error) {
	err = s.view(func(t *txn) error {
		for _, e := range Envs() {
			tok := token
			if tok == "" {
				b := t.env(e, "shortlinks").Get([]byte(code))
				if b == nil {
					continue
				}
				tok = string(b)
			}
			x, found, err := t.getSession(e, tok)
			if err != nil || !found {
				if err != nil {
					return err
				}
				continue
			}
			look, ok = SDKLook{Lang: x.Lang, Theme: x.Theme}, true
			switch a, err := t.getApplicant(e, x.ExternalUserID); {
			case err == nil:
				look.Settled, look.Erased = a.settled() && !a.erased(), a.erased()
			case ErrorCode(err) != ENOTFOUND:
				return err
			}
			return nil
		}
		return nil
	})
	return look, ok, err
}
