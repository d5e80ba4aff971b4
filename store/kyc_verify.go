package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"maps"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/complybox/complybox/store/imagecheck"
	"github.com/complybox/complybox/store/imagequality"
)

// ID document types of direct verification.
func idDocTypes() []string { return []string{"PASSPORT", "ID_CARD", "DRIVERS", "RESIDENCE_PERMIT"} }

// VerifyInput is the body of POST …/verify (SPEC 3.4). Images are base64.
type VerifyInput struct {
	IDDocType      string                     `json:"idDocType"`
	Country        string                     `json:"country"`
	DocumentFront  string                     `json:"documentFront"`
	DocumentBack   string                     `json:"documentBack"`
	Selfie         string                     `json:"selfie"`
	ProofOfAddress string                     `json:"proofOfAddress"`
	LivenessFrames []string                   `json:"livenessFrames"`
	Questionnaire  map[string]json.RawMessage `json:"questionnaire"`
}

// upload is one decoded image on its way to a step.
type upload struct {
	kind, side, docType, country string
	img                          imagecheck.Image
}

// DecodeImage decodes the base64 upload value of field and checks what its
// header tells (imagecheck.DecodeHeader): format, size and dimensions,
// without decoding the pixels, which the store does, bounded, when it
// stores the image. Returns EINVALID naming field.
func DecodeImage(field, value string, allowPDF bool) (imagecheck.Image, error) {
	img, err := imagecheck.DecodeHeader(field, value, allowPDF)
	return img, fieldError(err)
}

// decodeImage decodes and checks the base64 upload value of field
// completely, within the process's decode budget. Returns EINVALID naming
// field and EUNAVAILABLE when too many images are being decoded.
func (s *Store) decodeImage(field, value string, allowPDF bool) (imagecheck.Image, error) {
	img, err := s.decodes.Decode(field, value, allowPDF)
	return img, fieldError(err)
}

// AssessImage measures the quality of an uploaded JPEG or PNG against th
// (package imagequality) on the image decoded under the checks and within
// the decode budget of every upload (SPEC §3.4), never beyond them: ok is
// false for a PDF, for an image those checks refuse and when the decoder
// is busy, and the upload's own checks then answer for it.
func (s *Store) AssessImage(data []byte, th imagequality.Thresholds) (rep imagequality.Report, ok bool) {
	err := s.decodes.Use("image", data, func(img image.Image) { rep, ok = imagequality.Assess(img, th), true })
	return rep, ok && err == nil
}

// checkImage checks the decoded upload data of field completely, within the
// process's decode budget. Returns EINVALID naming field and EUNAVAILABLE.
func (s *Store) checkImage(field string, data []byte, allowPDF bool) (imagecheck.Image, error) {
	img, err := s.decodes.Check(field, data, allowPDF)
	return img, fieldError(err)
}

// prepare loads the applicant and its level for a data call and refuses
// those that cannot take data. Returns ENOTFOUND or ECONFLICT.
func (s *Store) prepare(env Env, extID string) (*diskApplicant, Level, error) {
	var a *diskApplicant
	var l Level
	err := s.viewIn(env, func(t *txn) error {
		var err error
		if a, err = t.getApplicant(env, extID); err != nil {
			return err
		}
		if err := a.acceptsStepData(); err != nil {
			return err
		}
		l, err = t.applicantLevel(env, a)
		return err
	})
	return a, l, err
}

// acceptsData returns ECONFLICT when the applicant cannot take new data:
// erased, inactive, under review, or rejected with FINAL.
func (a *diskApplicant) acceptsData() error {
	if a.erased() {
		return Conflict("applicant_erased", "applicant %q was erased", a.ExternalID)
	}
	if a.Status != StatusActive {
		return Conflict("applicant_inactive", "applicant %q is %s", a.ExternalID, a.Status)
	}
	if a.InReview {
		return Conflict("review_in_progress", "a review of applicant %q is in progress", a.ExternalID)
	}
	if a.Review.finalRed() || a.ClosedFinal {
		// A company closes RED FINAL over its children even when its own
		// steps were RETRY (SPEC §3.6); FINAL holds until reset (§3.3),
		// also once a new row or a reopened child put it back in review.
		return Conflict("review_final", "applicant %q was rejected with FINAL; reset it first", a.ExternalID)
	}
	for _, st := range a.Steps {
		if !st.Optional && st.final() && st.ReviewStatus == ReviewCompleted {
			return Conflict("review_final", "applicant %q was rejected with FINAL; reset it first", a.ExternalID)
		}
	}
	return nil
}

// acceptsStepData is acceptsData for data of the applicant's own steps,
// from the partner's API and from the hosted session alike. A GREEN
// verdict is terminal too (SPEC §3.5): the data it approved is not
// replaced afterwards, which would leave GREEN over data nobody reviewed;
// the partner resets the applicant (or moves it to another level) to
// collect new data. Likewise a company whose own steps were all reviewed
// (none to redo after a RETRY) and that waits for its beneficial owners'
// verifications takes none, as it would close over data nobody reviewed
// (SPEC §3.6). A company's beneficial-owner rows are not step data: one
// the partner adds after the verdict reopens the company (§3.6, acceptsEdits),
// and the hosted UI takes one until the company is approved (SDKAddUbo).
func (a *diskApplicant) acceptsStepData() error {
	if err := a.acceptsData(); err != nil {
		return err
	}
	if err := a.approved(); err != nil {
		return err
	}
	return a.waitsForOwners()
}

// approved returns ECONFLICT review_completed for an applicant approved
// (GREEN), whose approval no new data may reopen.
func (a *diskApplicant) approved() error {
	if a.Review.ReviewStatus == ReviewCompleted && a.Review.ReviewAnswer == Green {
		return Conflict("review_completed", "applicant %q was approved (GREEN); reset it to collect new data", a.ExternalID)
	}
	return nil
}

// waitsForOwners returns ECONFLICT review_in_progress for a company whose
// own steps were all reviewed and that waits for its beneficial owners'
// verifications: its own data, documents or fields, stays as reviewed.
func (a *diskApplicant) waitsForOwners() error {
	if a.awaitsOwners() {
		return Conflict("review_in_progress", "company %q waits for its beneficial owners' verification; its own data was reviewed (reset it to collect new data)", a.ExternalID)
	}
	return nil
}

// awaitsOwners reports whether a is a company whose own steps were all
// reviewed and whose verdict waits for its beneficial owners'
// verifications.
func (a *diskApplicant) awaitsOwners() bool {
	return a.Type == TypeCompany && len(a.Ubos) > 0 && !a.InReview && a.Review.ReviewStatus == ReviewInReview && a.ownStepsReviewed()
}

// ownStepsReviewed reports whether every required step of the applicant has
// its verdict and none waits for new data after a RETRY.
func (a *diskApplicant) ownStepsReviewed() bool {
	for _, st := range a.Steps {
		if !st.Optional && (st.ReviewStatus != ReviewCompleted || st.retry()) {
			return false
		}
	}
	return true
}

// errLevelChanged reports that the applicant's level changed between an
// upload's checks, made outside the write transaction because decoding
// images is slow, and the write: the caller checks again with the new level.
var errLevelChanged = errors.New("the applicant's level changed during the request")

// levelRetries bounds how often an upload starts over after its applicant's
// level changed under it.
const levelRetries = 3

// withLevelRetry runs an upload until it is not overtaken by a level change.
func withLevelRetry[T any](fn func() (T, error)) (T, error) {
	for try := 0; ; try++ {
		out, err := fn()
		if !errors.Is(err, errLevelChanged) {
			return out, err
		}
		if try == levelRetries {
			var zero T
			return zero, Conflict("level_changed", "the applicant's level kept changing while the upload was checked; send it again")
		}
	}
}

// checkLevel returns errLevelChanged unless a's level is still l, the level
// the upload was checked against: called in the write transaction.
func (t *txn) checkLevel(env Env, a *diskApplicant, l Level) error {
	cur, err := t.applicantLevel(env, a)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(cur, l) {
		return errLevelChanged
	}
	return nil
}

// Verify is direct verification: it checks and stores the images and
// answers, and when every required step has data submits the applicant (in
// the sandbox it is reviewed at once). The level is checked again in the
// transaction that stores the data. Returns the status body; EINVALID
// naming the field, ENOTFOUND, ECONFLICT.
func (s *Store) Verify(env Env, extID string, in VerifyInput) (StatusView, error) {
	return withLevelRetry(func() (StatusView, error) { return s.verify(env, extID, in) })
}

func (s *Store) verify(env Env, extID string, in VerifyInput) (StatusView, error) {
	a, l, err := s.prepare(env, extID)
	if err != nil {
		return StatusView{}, err
	}
	if a.Type == TypeCompany {
		// Its images would have no step to go to: say so rather than
		// answer 200 and drop them.
		return StatusView{}, &Error{Code: EINVALID, Reason: "not_an_individual", Field: "externalUserId",
			Message: "applicant " + a.ExternalID + " is a company; direct verification is for individuals (a company's documents go to POST …/documents)"}
	}
	_, hasID := l.step(StepIdentityDoc)
	_, hasSelfie := l.step(StepSelfie)
	_, hasLiveness := l.step(StepLiveness)
	_, hasPOA := l.step(StepPOA)
	_, hasQuestions := l.step(StepQuestionnaire)
	var ups []upload
	add := func(field, value, kind, side, docType string, required, pdf bool) error {
		country := ""
		if kind == StepIdentityDoc {
			country = in.Country
		}
		if value == "" {
			if required {
				return Invalid(field, "%s is required", field)
			}
			return nil
		}
		img, err := s.decodeImage(field, value, pdf)
		if err != nil {
			return err
		}
		ups = append(ups, upload{kind: kind, side: side, docType: docType, country: country, img: img})
		return nil
	}
	if hasID {
		if in.IDDocType == "" {
			return StatusView{}, Invalid("idDocType", "idDocType is required: one of %s", strings.Join(idDocTypes(), ", "))
		}
		if !inList(idDocTypes(), in.IDDocType) {
			return StatusView{}, Invalid("idDocType", "idDocType must be one of %s", strings.Join(idDocTypes(), ", "))
		}
		if in.Country == "" {
			return StatusView{}, Invalid("country", "country is required: an ISO 3166-1 alpha-3 code in upper case")
		}
		if !IsCountry(in.Country) {
			return StatusView{}, Invalid("country", "country %q is not an ISO 3166-1 alpha-3 code in upper case", in.Country)
		}
		if err := checkIDDocument("idDocType", in.IDDocType, "country", in.Country, true); err != nil {
			return StatusView{}, err
		}
		if err := add("documentFront", in.DocumentFront, StepIdentityDoc, "front", in.IDDocType, true, true); err != nil {
			return StatusView{}, err
		}
		if err := add("documentBack", in.DocumentBack, StepIdentityDoc, "back", in.IDDocType, false, true); err != nil {
			return StatusView{}, err
		}
	}
	if hasSelfie {
		if err := add("selfie", in.Selfie, StepSelfie, "", "", true, false); err != nil {
			return StatusView{}, err
		}
	}
	if hasPOA {
		if err := add("proofOfAddress", in.ProofOfAddress, StepPOA, "", "", false, true); err != nil {
			return StatusView{}, err
		}
	}
	if hasLiveness && in.LivenessFrames != nil {
		if len(in.LivenessFrames) < 3 || len(in.LivenessFrames) > 20 {
			return StatusView{}, Invalid("livenessFrames", "livenessFrames needs 3 to 20 images")
		}
		for i, f := range in.LivenessFrames {
			if err := add("livenessFrames["+itoa(i)+"]", f, StepLiveness, "", "", true, false); err != nil {
				return StatusView{}, err
			}
		}
	}
	answers := in.Questionnaire
	if hasQuestions && answers != nil {
		if err := checkAnswers(l, answers); err != nil {
			return StatusView{}, err
		}
	} else {
		answers = nil
	}
	var out StatusView
	if s.beforeApply != nil {
		s.beforeApply()
	}
	err = s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, a.ExternalID)
		if err != nil {
			return err
		}
		if err := a.acceptsStepData(); err != nil {
			return err
		}
		if err := t.checkLevel(env, a, l); err != nil {
			return err
		}
		if hasLiveness && in.LivenessFrames != nil {
			if err := t.dropDocuments(env, a, func(d Document) bool { return d.Kind == StepLiveness }); err != nil {
				return err
			}
		}
		for _, u := range ups {
			if err := t.addDocument(env, a, l, u); err != nil {
				return err
			}
		}
		if answers != nil {
			a.answered(l, answers)
			a.dataArrived(StepQuestionnaire, l, t.now)
		}
		if err := a.checkSubmittable(l); err != nil {
			if e := AsError(err); e.Reason != "missing_step_data" {
				return err
			}
			if err := t.save(env, a); err != nil {
				return err
			}
			out = a.status()
			return nil
		}
		if err := t.submit(env, a, l, true); err != nil {
			return err
		}
		out = a.status()
		return nil
	})
	return out, err
}

// MaxAnswerLength is the longest answer to a text question, in characters.
const MaxAnswerLength = 2000

// checkAnswers checks questionnaire answers against the level's questions.
// Returns EINVALID naming questionnaire.<id>.
func checkAnswers(l Level, answers map[string]json.RawMessage) error {
	if len(l.Questionnaire) == 0 {
		// A level without questions (the built-in full-kyc-level and
		// kyb-level) takes the partner's own answers as they come, but
		// as text an operator reads: names and string values, at any
		// depth, without control characters.
		for _, k := range slices.Sorted(maps.Keys(answers)) {
			if err := checkControl("questionnaire", k, false); err != nil {
				return Invalid("questionnaire", "an answer's name contains a control character")
			}
			var v any
			if err := json.Unmarshal(answers[k], &v); err != nil {
				return Invalid("questionnaire."+k, "the answer is not JSON")
			}
			if err := textWithin("questionnaire."+k, v); err != nil {
				return err
			}
		}
		return nil
	}
	for k := range answers {
		found := false
		for _, q := range l.Questionnaire {
			found = found || q.ID == k
		}
		if !found {
			return Invalid("questionnaire."+k, "the level has no question %q", k)
		}
	}
	for _, q := range l.Questionnaire {
		f := "questionnaire." + q.ID
		raw, ok := answers[q.ID]
		if !ok || isNull(raw) {
			if q.Required {
				return Invalid(f, "question %q needs an answer", q.ID)
			}
			continue
		}
		switch q.Type {
		case "boolean":
			var b bool
			if json.Unmarshal(raw, &b) != nil {
				return Invalid(f, "the answer to %q must be true or false", q.ID)
			}
		case "choice":
			var s string
			if json.Unmarshal(raw, &s) != nil || !inList(q.Options, s) {
				return Invalid(f, "the answer to %q must be one of %s", q.ID, strings.Join(q.Options, ", "))
			}
		default:
			var s string
			if json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
				return Invalid(f, "the answer to %q must be a non-empty text", q.ID)
			}
			// A line break counts once, as a textarea's maxlength counts
			// it, though a form sends it as CR LF.
			if utf8.RuneCountInString(strings.ReplaceAll(s, "\r\n", "\n")) > MaxAnswerLength {
				return Invalid(f, "the answer to %q must be at most %d characters", q.ID, MaxAnswerLength)
			}
			if err := checkControl(f, s, true); err != nil {
				return err
			}
		}
	}
	return nil
}

// textWithin refuses a control character in any string or member name
// within v (a decoded JSON value) at path: line breaks and tabs are text.
// Returns EINVALID naming the path of the value ("questionnaire.a.b[1]").
func textWithin(path string, v any) error {
	switch v := v.(type) {
	case string:
		return checkControl(path, v, true)
	case []any:
		for i, e := range v {
			if err := textWithin(path+"["+itoa(i)+"]", e); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := checkControl(path, k, false); err != nil {
				return Invalid(path, "a member name within %s contains a control character", path)
			}
			if err := textWithin(path+"."+k, v[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

// addDocument stores an image and records it on the applicant, replacing a
// document of the same kind, side and type (liveness frames accumulate up
// to MaxLivenessFrames, the newest kept).
func (t *txn) addDocument(env Env, a *diskApplicant, l Level, u upload) error {
	if u.kind != StepLiveness {
		if err := t.dropDocuments(env, a, func(d Document) bool {
			if d.Kind == StepIdentityDoc && u.kind == StepIdentityDoc && otherIDDocument(d, u) {
				return true // another document: its other side goes too
			}
			return d.Kind == u.kind && string(d.Side) == u.side && (u.kind != StepCompanyDocs || string(d.DocType) == u.docType)
		}); err != nil {
			return err
		}
	} else if err := t.keepFrames(env, a, MaxLivenessFrames-1); err != nil {
		return err
	}
	images := t.env(env, "images")
	if images.Get([]byte(u.img.SHA256)) == nil {
		if err := images.Put([]byte(u.img.SHA256), u.img.Data); err != nil {
			return err
		}
	}
	if err := t.env(env, "image_owners").Put([]byte(u.img.SHA256+"|"+a.ID), []byte(u.kind)); err != nil {
		return err
	}
	a.Documents = append(a.Documents, Document{Kind: u.kind, Side: NullString(u.side), DocType: NullString(u.docType), Country: NullString(u.country),
		UploadedAtUtc: At(t.now), SHA256: u.img.SHA256, ContentType: u.img.ContentType})
	a.dataArrived(u.kind, l, t.now)
	return nil
}

// otherIDDocument reports whether upload u is another identity document
// than d, by type or issuing country: a passport's front never joins an
// ID card's back.
func otherIDDocument(d Document, u upload) bool {
	return (u.docType != "" && d.DocType != "" && string(d.DocType) != u.docType) ||
		(u.country != "" && d.Country != "" && string(d.Country) != u.country)
}

// keepFrames drops the applicant's oldest liveness frames beyond the n
// newest, so that frames added one by one (POST …/documents) stay within
// MaxLivenessFrames, as an upload of frames does.
func (t *txn) keepFrames(env Env, a *diskApplicant, n int) error {
	frames := 0
	for _, d := range a.Documents {
		if d.Kind == StepLiveness {
			frames++
		}
	}
	drop := frames - n
	return t.dropDocuments(env, a, func(d Document) bool {
		if d.Kind != StepLiveness || drop <= 0 {
			return false
		}
		drop--
		return true
	})
}

// dropDocuments removes the applicant's documents that match, and their
// images once nothing refers to them.
func (t *txn) dropDocuments(env Env, a *diskApplicant, match func(Document) bool) error {
	kept := a.Documents[:0]
	var gone []string
	for _, d := range a.Documents {
		if match(d) {
			gone = append(gone, d.SHA256)
			continue
		}
		kept = append(kept, d)
	}
	a.Documents = kept
	for _, sha := range gone {
		still := false
		for _, d := range a.Documents {
			still = still || d.SHA256 == sha
		}
		if still {
			continue
		}
		if err := t.releaseImage(env, a.ID, sha); err != nil {
			return err
		}
	}
	return nil
}

// releaseImage removes applicant id's claim on an image and the bytes once
// no applicant claims it.
func (t *txn) releaseImage(env Env, applicantID, sha string) error {
	owners := t.env(env, "image_owners")
	if err := owners.Delete([]byte(sha + "|" + applicantID)); err != nil {
		return err
	}
	prefix := []byte(sha + "|")
	if k, _ := owners.Cursor().Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) {
		return nil
	}
	return t.env(env, "images").Delete([]byte(sha))
}

// DocumentInput is the body of POST …/documents.
type DocumentInput struct {
	Kind    string `json:"kind"`
	Side    string `json:"side"`
	DocType string `json:"docType"`
	Country string `json:"country"` // identity_doc: the issuing country
	Image   string `json:"image"`
	// IDDocType is DocType by the name /verify (and Sumsub) gives it.
	IDDocType string `json:"idDocType"`
}

// AddDocument adds one document to a step of the applicant's level, checked
// again in the transaction that stores it. Returns the document; EINVALID
// naming the field, ENOTFOUND, ECONFLICT.
func (s *Store) AddDocument(env Env, extID string, in DocumentInput) (Document, error) {
	if in.IDDocType == "" {
		return withLevelRetry(func() (Document, error) { return s.addDocument(env, extID, in) })
	}
	if in.DocType != "" && in.DocType != in.IDDocType {
		return Document{}, Invalid("idDocType", "idDocType is docType by another name; send one, or the same value in both")
	}
	in.DocType = in.IDDocType
	d, err := withLevelRetry(func() (Document, error) { return s.addDocument(env, extID, in) })
	if e := AsError(err); e.Code == EINVALID && e.Field == "docType" {
		// Named as it was sent.
		return d, Invalid("idDocType", "%s", strings.ReplaceAll(e.Message, "docType", "idDocType"))
	}
	return d, err
}

func (s *Store) addDocument(env Env, extID string, in DocumentInput) (Document, error) {
	a, l, err := s.prepare(env, extID)
	if err != nil {
		return Document{}, err
	}
	kinds := []string{}
	for _, st := range l.Steps {
		if !screeningStep(st.Kind) && st.Kind != StepQuestionnaire {
			kinds = append(kinds, st.Kind)
		}
	}
	if !inList(kinds, in.Kind) {
		return Document{}, Invalid("kind", "kind must be a document step of level %s: %s", l.Name, strings.Join(kinds, ", "))
	}
	switch in.Kind {
	case StepIdentityDoc:
		if in.Side == "" {
			in.Side = "front"
		}
		if in.Side != "front" && in.Side != "back" {
			return Document{}, Invalid("side", "side must be front or back")
		}
		if in.DocType != "" && !inList(idDocTypes(), in.DocType) {
			return Document{}, Invalid("docType", "docType must be one of %s", strings.Join(idDocTypes(), ", "))
		}
		if err := checkIDDocument("docType", in.DocType, "country", in.Country, false); err != nil {
			return Document{}, err
		}
	case StepCompanyDocs:
		if err := checkCompanyDocType("docType", in.DocType); err != nil {
			return Document{}, err
		}
	default:
		if in.Side != "" {
			return Document{}, Invalid("side", "side applies only to identity_doc")
		}
		if in.DocType != "" && !validDocType(strings.ToLower(in.DocType)) {
			return Document{}, Invalid("docType", "docType must be 1-64 characters of a-z0-9_")
		}
	}
	if in.Country != "" && in.Kind != StepIdentityDoc {
		return Document{}, Invalid("country", "country (the issuing country) applies only to identity_doc")
	}
	if in.Image == "" {
		return Document{}, Invalid("image", "image is required")
	}
	img, err := s.decodeImage("image", in.Image, in.Kind != StepSelfie && in.Kind != StepLiveness)
	if err != nil {
		return Document{}, err
	}
	var out Document
	if s.beforeApply != nil {
		s.beforeApply()
	}
	err = s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, a.ExternalID)
		if err != nil {
			return err
		}
		if err := a.acceptsStepData(); err != nil {
			return err
		}
		if err := t.checkLevel(env, a, l); err != nil {
			return err
		}
		if err := t.addDocument(env, a, l, upload{kind: in.Kind, side: in.Side, docType: in.DocType, country: in.Country, img: img}); err != nil {
			return err
		}
		out = a.Documents[len(a.Documents)-1]
		if err := t.appendInternal(env, a.ID, "document.added", map[string]any{"kind": in.Kind, "sha256": img.SHA256}); err != nil {
			return err
		}
		return t.save(env, a)
	})
	return out, err
}
