package store

import (
	"bytes"
	"strings"

	"github.com/complybox/complybox/store/screening"
)

// magicName is the value the sandbox reviewer reads: lastName for an
// individual, companyName for a company, upper-cased.
func (a *diskApplicant) magicName() string {
	f := "lastName"
	if a.Type == TypeCompany {
		f = "companyName"
	}
	return strings.ToUpper(strings.TrimSpace(a.Fields[f]))
}

// submit sends the applicant to review: every step with data goes to
// in_review, aml and adverse_media run. direct is the direct verification
// call (the sandbox reviews at once); otherwise the sandbox reviewer runs
// after review_delay. In production the automatic checks run and the
// applicant waits for an operator. Returns ECONFLICT when it cannot submit.
func (t *txn) submit(env Env, a *diskApplicant, l Level, direct bool) error {
	if err := a.checkSubmittable(l); err != nil {
		return err
	}
	screens := a.submitSteps(l, t.now)
	a.Attempt++
	a.SubmittedAt, a.InReview = At(t.now), true
	a.recompute()
	eventType := "applicant.sent_to_review"
	if direct {
		eventType = "enrollment.submitted"
	}
	if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: eventType, ActorType: ActorPartner,
		Details: map[string]any{"attempt": a.Attempt}}); err != nil {
		return err
	}
	if err := t.event(env, a, "applicantPending", map[string]any{"attempt": a.Attempt}); err != nil {
		return err
	}
	if env == Production {
		aml, err := t.productionChecks(env, a)
		if err != nil {
			return err
		}
		if err := t.screen(env, a, screens, aml); err != nil {
			return err
		}
		return t.hold(env, a)
	}
	aml := map[string]any{"result": "clear"}
	if a.magicName() == "SANCTIONED" {
		aml["result"] = "match"
	}
	if err := t.screen(env, a, screens, aml); err != nil {
		return err
	}
	if direct {
		return t.reviewSandbox(env, a)
	}
	if err := t.unschedule(a.ReviewJob); err != nil {
		return err
	}
	key, err := t.schedule(t.now.Add(t.s.settings.KYC.ReviewDelay), JobReview, env, a.ExternalID)
	if err != nil {
		return err
	}
	a.ReviewJob = key
	return t.save(env, a)
}

// screen records the aml and adverse_media runs of screens. aml is the
// aml.run's details: the sanctions screening's outcome. Adverse media is
// clear in the sandbox; production has no source for it, so it says that
// it was not screened rather than claim a clear result.
func (t *txn) screen(env Env, a *diskApplicant, screens []string, aml map[string]any) error {
	for _, kind := range screens {
		eventType, details := "aml.run", aml
		if kind == StepAdverseMedia {
			eventType, details = "adverse_media.run", map[string]any{"result": "clear"}
			if env == Production {
				details = map[string]any{"result": "not_screened", "reason": "complybox has no adverse-media source: screen by hand"}
			}
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: eventType, ActorType: ActorSystem,
			Details: details}); err != nil {
			return err
		}
	}
	return nil
}

// hold moves every step under review to awaitingOperatorReview.
func (t *txn) hold(env Env, a *diskApplicant) error {
	for i := range a.Steps {
		if st := &a.Steps[i]; st.ReviewStatus == ReviewSubmitted || st.ReviewStatus == ReviewInReview {
			st.set(t.now, ReviewAwaiting, "", "", nil, "")
		}
	}
	if err := t.save(env, a); err != nil {
		return err
	}
	if err := t.appendInternal(env, a.ID, "review.on_hold", map[string]any{"attempt": a.Attempt}); err != nil {
		return err
	}
	return t.event(env, a, "applicantOnHold", nil)
}

// reviewSandbox applies the sandbox rules of SPEC 3.5 to every step under review.
func (t *txn) reviewSandbox(env Env, a *diskApplicant) error {
	name := a.magicName()
	if name == "MANUAL" {
		return t.hold(env, a)
	}
	var submitted []*Step
	requiredDocs := 0
	for i := range a.Steps {
		if st := &a.Steps[i]; st.ReviewStatus == ReviewSubmitted || st.ReviewStatus == ReviewInReview {
			submitted = append(submitted, st)
			if documentStep(st.Kind) && !st.Optional {
				requiredDocs++
			}
		}
	}
	// red reports whether the rule's rejection hits st: document steps, or
	// every required step when no required document step is under review.
	// Only required steps make the verdict (§3.3), so a rule always hits
	// one when one is under review: a REJECT whose documents are optional
	// is not GREEN.
	red := func(st *Step) bool { return documentStep(st.Kind) || (requiredDocs == 0 && !st.Optional) }
	// The sanctions hit lands on the aml step, else on the first required
	// step under review.
	var sanctioned *Step
	for _, st := range submitted {
		if st.Kind == StepAML && !st.Optional {
			sanctioned = st
			break
		}
		if sanctioned == nil && !st.Optional {
			sanctioned = st
		}
	}
	for _, st := range submitted {
		switch {
		case name == "REJECT" && red(st):
			st.set(t.now, ReviewCompleted, Red, RejectFinal, []string{"FORGERY"}, "")
		case name == "RETRY" && red(st):
			st.set(t.now, ReviewCompleted, Red, RejectRetry, []string{"UNSATISFACTORY_PHOTOS"}, "")
		case name == "SANCTIONED" && st == sanctioned:
			st.set(t.now, ReviewCompleted, Red, RejectFinal, []string{"SANCTIONS"}, "")
		default:
			st.set(t.now, ReviewCompleted, Green, "", nil, "")
		}
	}
	switch name {
	case "REJECT", "SANCTIONED":
		a.RiskLevel = RiskHigh
	case "RETRY":
		a.RiskLevel = RiskMedium
	default:
		a.RiskLevel = RiskLow
	}
	return t.verdict(env, a, ActorSystem, "")
}

// verdict closes a review: when every required step is completed it
// records the answer in history and emits applicantReviewed.
func (t *txn) verdict(env Env, a *diskApplicant, actor, comment string) error {
	if err := t.unschedule(a.ReviewJob); err != nil {
		return err
	}
	a.ReviewJob, a.InReview = nil, false
	a.recompute()
	if a.Review.ReviewStatus != ReviewCompleted || a.Review.ReviewAnswer == "" {
		return t.save(env, a)
	}
	a.Review.ReviewedAtUtc, a.Review.ModerationComment = At(t.now), NullString(comment)
	// The risk follows the verdict that closed, whichever path closed it:
	// a company whose own review finishes after a rejected owner closes
	// RED FINAL, high risk, whatever its own steps' answer was.
	a.RiskLevel = a.Review.risk()
	if err := t.save(env, a); err != nil {
		return err
	}
	eventType := "applicant.approved"
	if a.Review.ReviewAnswer == Red {
		eventType = "applicant.rejected"
	}
	if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: eventType, ActorType: actor, Details: map[string]any{
		"reviewAnswer": a.Review.ReviewAnswer, "reviewRejectType": a.Review.ReviewRejectType,
		"rejectLabels": a.Review.RejectLabels, "attempt": a.Attempt,
	}}); err != nil {
		return err
	}
	if !a.SessionEnd.IsZero() {
		// The applicant was enrolled through a hosted-UI session.
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "enrollment.completed", ActorType: ActorSystem,
			Details: map[string]any{"reviewAnswer": a.Review.ReviewAnswer}}); err != nil {
			return err
		}
	}
	if err := t.event(env, a, "applicantReviewed", nil); err != nil {
		return err
	}
	return t.syncChild(env, a) // UBO hook (store/kyb_company.go): a child's verdict updates its row and may close the company
}

// productionChecks runs the automatic checks of SPEC 3.5 (age, duplicate
// selfie or document across applicants, sanctions) and records each finding
// as an internal history entry. It returns the sanctions screening's
// outcome as aml.run reports it to the partner: match, clear, or
// not_screened with the reason (no list configured, or the list could not
// be read), never clear for a screening that did not run.
func (t *txn) productionChecks(env Env, a *diskApplicant) (map[string]any, error) {
	record := func(check, result string, details map[string]any) error {
		if details == nil {
			details = map[string]any{}
		}
		details["check"], details["result"] = check, result
		return t.appendInternal(env, a.ID, "review.check", details)
	}
	if err := record("images", "valid", map[string]any{"documents": len(a.Documents)}); err != nil {
		return nil, err
	}
	if a.Type == TypeIndividual {
		dob := a.Fields["dateOfBirth"]
		age, ok := screening.AgeOn(dob, t.now)
		var err error
		switch {
		case dob == "" || !ok:
			err = record("age", "unknown", nil)
		case age < 18:
			err = record("age", "under_18", map[string]any{"age": age, "suggestedLabel": "AGE_REQUIREMENT_MISMATCH"})
		default:
			err = record("age", "ok", map[string]any{"age": age})
		}
		if err != nil {
			return nil, err
		}
	}
	shares := t.sharedImages(env, a)
	for _, sh := range shares {
		details := map[string]any{"kind": sh.Kind, "sha256": sh.SHA256, "otherApplicantId": sh.OtherApplicantID, "suggestedLabel": "DUPLICATE"}
		if sh.OtherExternalUserID != "" {
			details["otherExternalUserId"] = sh.OtherExternalUserID // what the console links by
		}
		if err := record("duplicate", "match", details); err != nil {
			return nil, err
		}
	}
	if len(shares) == 0 {
		if err := record("duplicate", "none", nil); err != nil {
			return nil, err
		}
	}
	if t.s.sanctions != nil {
		list, err := t.s.sanctions.Names()
		if err != nil {
			t.s.log.Warn("sanctions list unreadable", "file", t.s.settings.KYC.SanctionsFile, "err", err)
			return map[string]any{"result": "not_screened", "reason": "the sanctions list could not be read: screen by hand"},
				record("sanctions", "list_unavailable", map[string]any{"suggestedAction": "screen by hand"})
		}
		var entry string
		var hit bool
		if a.Type == TypeCompany {
			entry, hit = screening.FindSanction(list, a.Fields["companyName"])
		} else {
			entry, hit = screening.FindPerson(list, a.Fields["firstName"], a.Fields["middleName"], a.Fields["lastName"])
		}
		if hit {
			return map[string]any{"result": "match"}, record("sanctions", "match", map[string]any{"entry": entry, "suggestedLabel": "SANCTIONS"})
		}
		return map[string]any{"result": "clear"}, record("sanctions", "clear", nil)
	}
	return map[string]any{"result": "not_screened", "reason": "no sanctions list is configured (kyc.sanctions_file): screen by hand"},
		record("sanctions", "not_configured", nil)
}

// ImageShare is an image of an applicant's documents that another
// applicant's documents hold too (SPEC 3.5: a duplicate selfie or document
// across applicants).
type ImageShare struct {
	Kind, SHA256                          string
	OtherApplicantID, OtherExternalUserID string
}

// sharedImages lists the images of a's documents, of every kind, that
// other applicants of env hold too: one entry per image and other
// applicant, read from the image index (its cost follows the applicant's
// documents and their sharers, not the data size).
func (t *txn) sharedImages(env Env, a *diskApplicant) []ImageShare {
	owners, ids := t.env(env, "image_owners"), t.env(env, "applicant_ids")
	seen := map[string]bool{}
	var out []ImageShare
	for _, d := range a.Documents {
		if seen[d.SHA256] {
			continue
		}
		seen[d.SHA256] = true
		prefix := []byte(d.SHA256 + "|")
		c := owners.Cursor()
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			other := string(k[len(prefix):])
			if other == a.ID {
				continue
			}
			sh := ImageShare{Kind: d.Kind, SHA256: d.SHA256, OtherApplicantID: other}
			if ext := ids.Get([]byte(other)); ext != nil {
				sh.OtherExternalUserID = string(ext)
			}
			out = append(out, sh)
		}
	}
	return out
}

// SharedImages returns the images of the applicant's documents that other
// applicants of env hold now, so that the console shows a duplicate on
// both applicants, also on the one whose checks ran before the other
// uploaded the image. Returns ENOTFOUND.
func (s *Store) SharedImages(env Env, extID string) ([]ImageShare, error) {
	var out []ImageShare
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = t.sharedImages(env, a)
		return nil
	})
	return out, err
}

// runReview runs the sandbox reviewer for an applicant whose review_delay
// has passed. A job that is no longer the applicant's current one is void.
func (t *txn) runReview(j Job) error {
	a, err := t.getApplicant(j.Env, j.ID)
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return nil
		}
		return err
	}
	if !bytes.Equal(a.ReviewJob, j.Key) {
		return nil
	}
	a.ReviewJob = nil
	if !a.InReview || a.erased() {
		return t.save(j.Env, a)
	}
	return t.reviewSandbox(j.Env, a)
}

// Decision is an operator's verdict, or a forced sandbox verdict.
type Decision struct {
	ReviewAnswer      string   `json:"reviewAnswer"`
	ReviewRejectType  string   `json:"reviewRejectType"`
	RejectLabels      []string `json:"rejectLabels"`
	ModerationComment string   `json:"moderationComment"`
	// Operator is the console account that decided ("" through the API):
	// recorded as internal history of the applicant and of the console.
	Operator string `json:"-"`
	// Attempt and Version are the submission and what of the applicant the
	// deciding operator was shown (the console's page; Version is
	// ApplicantVersion); 0 and "" decide the applicant as it is. A later
	// submission, or a change of what the page showed (a PATCH while it
	// waits), refuses the decision (409 applicant_changed): what changed
	// was never on the operator's screen.
	Attempt int    `json:"-"`
	Version string `json:"-"`
}

// validate checks a decision. Returns EINVALID naming the field.
func (d *Decision) validate(forced bool) error {
	switch d.ReviewAnswer {
	case Green:
		if d.ReviewRejectType != "" {
			return Invalid("reviewRejectType", "reviewRejectType goes only with RED")
		}
		if len(d.RejectLabels) > 0 {
			return Invalid("rejectLabels", "rejectLabels go only with RED")
		}
	case Red:
		if d.ReviewRejectType == "" && forced {
			d.ReviewRejectType = RejectFinal
		}
		if d.ReviewRejectType != RejectFinal && d.ReviewRejectType != RejectRetry {
			return Invalid("reviewRejectType", "reviewRejectType must be FINAL or RETRY with RED")
		}
	default:
		return Invalid("reviewAnswer", "reviewAnswer must be GREEN or RED")
	}
	for i, l := range d.RejectLabels {
		if !inList(RejectLabels(), l) {
			return Invalid("rejectLabels["+itoa(i)+"]", "unknown reject label %q", l)
		}
	}
	if longerThan(d.ModerationComment, 2000) {
		return Invalid("moderationComment", "moderationComment must be at most 2000 characters")
	}
	// The comment reaches the status, applicantReviewed and the hosted
	// page: text, on several lines if need be.
	return checkControl("moderationComment", d.ModerationComment, true)
}

func (d Decision) apply(t *txn, st *Step) {
	if d.ReviewAnswer == Green {
		st.set(t.now, ReviewCompleted, Green, "", nil, d.ModerationComment)
		return
	}
	st.set(t.now, ReviewCompleted, Red, d.ReviewRejectType, append([]string{}, d.RejectLabels...), d.ModerationComment)
}

// risk is the riskLevel of a closed verdict.
func (r Review) risk() string {
	return Decision{ReviewAnswer: string(r.ReviewAnswer), ReviewRejectType: string(r.ReviewRejectType)}.risk()
}

func (d Decision) risk() string {
	if d.ReviewAnswer == Green {
		return RiskLow
	}
	if d.ReviewRejectType == RejectRetry {
		return RiskMedium
	}
	return RiskHigh
}

// Decide records an operator's decision on an applicant waiting in
// awaitingOperatorReview. Returns ENOTFOUND, EINVALID naming the field and
// ECONFLICT not_awaiting_operator_review.
func (s *Store) Decide(env Env, extID string, d Decision) (StatusView, error) {
	if err := d.validate(false); err != nil {
		return StatusView{}, err
	}
	var out StatusView
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		awaiting := false
		for i := range a.Steps {
			if st := &a.Steps[i]; st.ReviewStatus == ReviewAwaiting {
				awaiting = true
			}
		}
		if !awaiting {
			return Conflict("not_awaiting_operator_review", "applicant %q is %s, not awaitingOperatorReview", extID, a.Review.ReviewStatus)
		}
		if d.Attempt != 0 && d.Attempt != a.Attempt {
			return Conflict("applicant_changed", "applicant %q was submitted again (attempt %d) after the page showed attempt %d: review what it sent now", extID, a.Attempt, d.Attempt)
		}
		if d.Version != "" && d.Version != a.shownVersion() {
			return Conflict("applicant_changed", "applicant %q changed after the page showed it (its data was changed while it waited): review it as it is now", extID)
		}
		for i := range a.Steps {
			if st := &a.Steps[i]; st.ReviewStatus == ReviewAwaiting {
				d.apply(t, st)
			}
		}
		labels := d.RejectLabels
		if labels == nil {
			labels = []string{}
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "managed_compliance.decided", ActorType: ActorOperator,
			Details: map[string]any{"reviewAnswer": d.ReviewAnswer, "reviewRejectType": NullString(d.ReviewRejectType),
				"rejectLabels": labels, "moderationComment": NullString(d.ModerationComment)}}); err != nil {
			return err
		}
		if d.Operator != "" {
			who := map[string]any{"operator": d.Operator, "reviewAnswer": d.ReviewAnswer, "reviewRejectType": NullString(d.ReviewRejectType)}
			if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "console.decided", ActorType: ActorOperator, Details: who, Internal: true}); err != nil {
				return err
			}
			if err := t.consoleEvent([]Env{env}, "console.decided", map[string]any{"operator": d.Operator, "applicant": extID,
				"reviewAnswer": d.ReviewAnswer, "reviewRejectType": NullString(d.ReviewRejectType)}); err != nil {
				return err
			}
		}
		a.RiskLevel = d.risk()
		if err := t.verdict(env, a, ActorOperator, d.ModerationComment); err != nil {
			return err
		}
		out = a.status()
		return nil
	})
	return out, err
}

// ForceReview sets a verdict on every step at once (sandbox only). Returns
// EFORBIDDEN sandbox_only outside the sandbox, ENOTFOUND, EINVALID naming
// the field and ECONFLICT for an erased applicant.
func (s *Store) ForceReview(env Env, extID string, d Decision) (StatusView, error) {
	if env != Sandbox {
		return StatusView{}, Errorf(EFORBIDDEN, "sandbox_only", "this call exists only in the sandbox environment")
	}
	if err := d.validate(true); err != nil {
		return StatusView{}, err
	}
	var out StatusView
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if a.erased() {
			return Conflict("applicant_erased", "applicant %q was erased", extID)
		}
		for i := range a.Steps {
			d.apply(t, &a.Steps[i])
		}
		a.RiskLevel = d.risk()
		if err := t.verdict(env, a, ActorPartner, d.ModerationComment); err != nil {
			return err
		}
		out = a.status()
		return nil
	})
	return out, err
}
