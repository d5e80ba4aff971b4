package store

import (
	"encoding/json"
	"sort"
	"strings"
)

// The hosted UI's form posts: personal data, uploads, answers, submission
// and beneficial owners, each recorded as an sdk history entry.

// sdkInternal records an internal hosted-UI entry. A run of the same call
// (the same event type and details: the waiting page reads the state every
// few seconds for as long as it is open, a client repeats a refused call)
// is one entry that counts the calls: details "calls" (from the second on)
// and "lastAtUtc". An applicant's history is never removed by retention,
// so an open page must not grow it without bound; each call is still an
// sdk history event (SPEC §3.8), counted in its run's entry.
func (t *txn) sdkInternal(x Session, a *diskApplicant, eventType string, details map[string]any) error {
	if k, last, ok := t.lastHistory(x.Env, a.ID); ok && last.Internal && last.ActorType == ActorSDK && last.EventType == eventType && sameCall(last.Details, details) {
		calls, _ := last.Details["calls"].(float64)
		last.Details["calls"] = max(calls, 1) + 1
		last.Details["lastAtUtc"] = At(t.now)
		v, err := json.Marshal(last)
		if err != nil {
			return err
		}
		return t.env(x.Env, "history").Put(k, v)
	}
	return t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: eventType, ActorType: ActorSDK, Details: details, Internal: true})
}

// sameCall reports whether the details of a stored entry (decoded from
// JSON) are those of a call, apart from the run's count and last time.
func sameCall(stored, call map[string]any) bool {
	rest := make(map[string]any, len(stored))
	for k, v := range stored {
		if k != "calls" && k != "lastAtUtc" {
			rest[k] = v
		}
	}
	if call == nil {
		call = map[string]any{}
	}
	a, err1 := json.Marshal(rest)
	b, err2 := json.Marshal(call)
	return err1 == nil && err2 == nil && string(a) == string(b)
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
				if f == "country" && a.Type == TypeCompany && a.inFlight() {
					// As the partner's PATCH (seed rule 5): the level's
					// applicability depends on the country.
					return &Error{Code: ECONFLICT, Reason: "review_in_progress", Field: f,
						Message: "country cannot change while a verification is in flight"}
				}
				changes = append(changes, change{field: f, value: v, set: set})
			}
		}
		if err := a.acceptsStepData(); err != nil {
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
			Details: map[string]any{"action": "personal_info.changed", "fields": changed}}); err != nil {
			return err
		}
		return t.event(x.Env, a, "applicantPersonalInfoChanged", map[string]any{"fields": changed})
	})
}

// SDKFile is one uploaded file of a hosted-UI upload. Field names the
// multipart part, for errors; Side is front or back for identity_doc;
// DocType, when set, is the file's own document type (the company
// documents form uploads every required document at once).
type SDKFile struct {
	Field   string
	Side    string
	DocType string
	Data    []byte
}

// SDKUpload is one hosted-UI upload: files for one step.
type SDKUpload struct {
	Kind    string
	Side    string // default side of files that carry none (identity_doc)
	DocType string
	Country string // identity_doc: the issuing country, checked against DocType (IDDocTypesFor)
	Files   []SDKFile
	// Quality are the photo problems the hosted UI measured, by file
	// field (imagequality codes): recorded with the upload as internal
	// document.quality entries, the console's image-quality findings.
	Quality map[string][]string
}

// Liveness frames per upload.
const (
	MinLivenessFrames = 3
	MaxLivenessFrames = 20
)

// check validates an upload against level l and checks its images within
// s's decode budget (the rules of POST …/documents). Returns the uploads
// to store; EINVALID naming the field, EUNAVAILABLE when too many images
// are being decoded.
func (in SDKUpload) check(s *Store, l Level) ([]upload, error) {
	kinds := []string{}
	for _, st := range l.Steps {
		if documentStep(st.Kind) {
			kinds = append(kinds, st.Kind)
		}
	}
	if !inList(kinds, in.Kind) {
		return nil, Invalid("kind", "kind must be a document step of level %s: %s", l.Name, strings.Join(kinds, ", "))
	}
	docTypes := []string{in.DocType}
	for _, f := range in.Files {
		if f.DocType != "" {
			if in.Kind != StepCompanyDocs {
				return nil, Invalid(f.Field, "a document type per file applies only to company_docs")
			}
			docTypes = append(docTypes, f.DocType)
		}
	}
	if in.Kind == StepCompanyDocs && in.DocType == "" && len(docTypes) > 1 {
		docTypes = docTypes[1:] // every file names its own
		for _, f := range in.Files {
			if f.DocType == "" {
				return nil, Invalid(f.Field, "docType is required for company_docs, e.g. certificate_of_incorporation")
			}
		}
	}
	for _, dt := range docTypes {
		switch in.Kind {
		case StepIdentityDoc:
			if dt != "" && !inList(idDocTypes(), dt) {
				return nil, Invalid("docType", "docType must be one of %s", strings.Join(idDocTypes(), ", "))
			}
		case StepCompanyDocs:
			if err := checkCompanyDocType("docType", dt); err != nil {
				return nil, err
			}
		default:
			if dt != "" && !validDocType(strings.ToLower(dt)) {
				return nil, Invalid("docType", "docType must be 1-64 characters of a-z0-9_")
			}
		}
	}
	if in.Kind == StepIdentityDoc {
		if err := checkIDDocument("docType", in.DocType, "country", in.Country, false); err != nil {
			return nil, err
		}
	} else if in.Country != "" {
		return nil, Invalid("country", "country (the issuing country) applies only to identity_doc")
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
		docType := in.DocType
		if f.DocType != "" {
			docType = f.DocType
		}
		if in.Kind != StepLiveness {
			key := side + "/" + docType
			if sides[key] {
				return nil, Invalid(f.Field, "one file per upload (per side of an identity document, per company document type)")
			}
			sides[key] = true
		}
		img, err := s.checkImage(f.Field, f.Data, in.Kind != StepSelfie && in.Kind != StepLiveness)
		if err != nil {
			return nil, err
		}
		out = append(out, upload{kind: in.Kind, side: side, docType: docType, country: in.Country, img: img})
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
	ups, err := in.check(s, l)
	if err != nil {
		return SDKState{}, err
	}
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, l Level) error {
		if err := a.acceptsStepData(); err != nil {
			return err
		}
		if in.Kind == StepLiveness {
			if err := t.dropDocuments(x.Env, a, func(d Document) bool { return d.Kind == StepLiveness }); err != nil {
				return err
			}
		}
		hashes, docTypes := []string{}, []string{}
		for i, u := range ups { // ups[i] is in.Files[i] (check)
			if u.docType != "" && !inList(docTypes, u.docType) {
				docTypes = append(docTypes, u.docType)
			}
			if err := t.addDocument(x.Env, a, l, u); err != nil {
				return err
			}
			hashes = append(hashes, u.img.SHA256)
			if problems := in.Quality[in.Files[i].Field]; len(problems) > 0 {
				if err := t.sdkInternal(x, a, "document.quality", map[string]any{"check": "image_quality", "kind": u.kind,
					"field": in.Files[i].Field, "sha256": u.img.SHA256, "problems": problems}); err != nil {
					return err
				}
			}
		}
		if err := t.save(x.Env, a); err != nil {
			return err
		}
		docType := in.DocType
		if docType == "" && len(docTypes) == 1 {
			docType = docTypes[0] // one file that names its own (the page's company documents)
		}
		details := map[string]any{"action": "documents.uploaded", "kind": in.Kind, "docType": NullString(docType), "sha256": hashes}
		if len(docTypes) > 1 {
			details["docTypes"] = docTypes
		}
		if in.Country != "" {
			details["country"] = in.Country
		}
		return t.sdkUpdated(x, a, details)
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
		if err := a.acceptsStepData(); err != nil {
			return err
		}
		a.answered(l, answers)
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
	// Repeated is true when the company already had the row: nothing was
	// added.
	Repeated bool `json:"-"`
}

// SDKAddUbo appends a beneficial-owner row with source sdk to the
// session's company while it takes data (before submission, or after a
// RETRY), validated as POST /v1/applicants/{id}/ubos validates it; history
// applicant.updated by sdk. A row the company already has, field for
// field, is not added again: the answer names that row, Repeated, and the
// call is an internal sdk.ubo_repeated entry. The check and the append
// are one transaction. Returns EUNAUTHORIZED, EGONE, EINVALID
// not_a_company for an individual or naming the field, and ECONFLICT when
// the applicant takes no data now (in review, rejected for good) or
// too_many_ubos.
func (s *Store) SDKAddUbo(token string, in UboInput) (SDKUboAdded, error) {
	var added UboAdded
	repeated := false
	st, err := s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, _ Level) error {
		if a.Type != TypeCompany {
			return &Error{Code: EINVALID, Reason: "not_a_company",
				Message: "this verification is for an individual; beneficial-owner rows exist only for companies"}
		}
		// Once the company was approved the page takes nothing, rows
		// included, as every other write of the page: whoever still holds
		// the link cannot withdraw an approval. A row the partner adds
		// (POST /v1/applicants/{id}/ubos) still reopens it (§3.6), and
		// while the company waits for its owners a row only adds one more
		// owner to verify, so the page takes it then.
		if err := a.acceptsData(); err != nil {
			return err
		}
		if err := a.approved(); err != nil {
			return err
		}
		i, same, err := a.repeatedUbo(in, t.now)
		if err != nil {
			return err
		}
		if same {
			repeated, added = true, UboAdded{UboIndex: i, Row: a.Ubos[i].view(i)}
			return t.sdkInternal(x, a, "sdk.ubo_repeated", map[string]any{"uboIndex": i})
		}
		i, err = a.appendUbo(in, "", SourceSDK, t.now)
		if err != nil {
			return err
		}
		added = UboAdded{UboIndex: i, Row: a.Ubos[i].view(i)}
		if err := t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSDK,
			Details: map[string]any{"action": "ubo.added", "uboIndex": i, "roles": a.Ubos[i].Roles, "source": SourceSDK}}); err != nil {
			return err
		}
		return t.saveCompany(x.Env, a)
	})
	if err != nil {
		return SDKUboAdded{}, err
	}
	return SDKUboAdded{SDKState: st, UboIndex: added.UboIndex, Row: sdkUbo(added.Row), Repeated: repeated}, nil
}

// LegalForms lists the accepted values of legalForm, lower case (for the
// hosted UI's choice).
func LegalForms() []string { return legalForms() }

// IDDocTypes lists the identity document types.
func IDDocTypes() []string { return idDocTypes() }
