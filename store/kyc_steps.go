package store

import "time"

// Review statuses of a step and of an applicant (SPEC 3.3).
const (
	ReviewPending   = "pending"
	ReviewSubmitted = "submitted"
	ReviewInReview  = "in_review"
	ReviewAwaiting  = "awaitingOperatorReview"
	ReviewCompleted = "completed"
	ReviewExpired   = "expired"
)

// Review answers and reject types.
const (
	Green        = "GREEN"
	Red          = "RED"
	RejectFinal  = "FINAL"
	RejectRetry  = "RETRY"
	RejectExpire = "EXPIRED"
)

func reviewStatuses() []string {
	return []string{ReviewPending, ReviewSubmitted, ReviewInReview, ReviewAwaiting, ReviewCompleted, ReviewExpired}
}

// RejectLabels lists the reject labels of SPEC 3.3.
func RejectLabels() []string {
	return []string{"FORGERY", "DOCUMENT_TEMPLATE", "LOW_QUALITY", "UNSATISFACTORY_PHOTOS", "SCREENSHOTS",
		"SELFIE_MISMATCH", "BAD_FACE_MATCHING", "FRAUDULENT_LIVENESS", "ID_INVALID", "EXPIRATION_DATE", "DUPLICATE",
		"BLACKLIST", "AGE_REQUIREMENT_MISMATCH", "WRONG_ADDRESS", "BAD_PROOF_OF_ADDRESS", "INCOMPLETE_DOCUMENT",
		"SANCTIONS", "PEP", "ADVERSE_MEDIA", "INCONSISTENT_PROFILE", "COMPANY_NOT_VALIDATED_BENEFICIARIES",
		"REGULATIONS_VIOLATIONS", "OTHER"}
}

// Step is one step of an applicant (seed 2.3).
type Step struct {
	Kind              string     `json:"kind"`
	Optional          bool       `json:"optional"`
	ReviewStatus      string     `json:"reviewStatus"`
	ReviewAnswer      NullString `json:"reviewAnswer"`
	ReviewRejectType  NullString `json:"reviewRejectType"`
	RejectLabels      []string   `json:"rejectLabels"`
	ModerationComment NullString `json:"moderationComment"`
	LastUpdatedAtUtc  Time       `json:"lastUpdatedAtUtc"`
}

func newSteps(l Level, now time.Time) []Step {
	out := make([]Step, 0, len(l.Steps))
	for _, ls := range l.Steps {
		out = append(out, Step{Kind: ls.Kind, Optional: ls.Optional, ReviewStatus: ReviewPending, RejectLabels: []string{}, LastUpdatedAtUtc: At(now)})
	}
	return out
}

// set moves the step to status with a verdict (empty answer: none).
func (st *Step) set(now time.Time, status, answer, rejectType string, labels []string, comment string) {
	if labels == nil {
		labels = []string{}
	}
	st.ReviewStatus, st.ReviewAnswer, st.ReviewRejectType = status, NullString(answer), NullString(rejectType)
	st.RejectLabels, st.ModerationComment, st.LastUpdatedAtUtc = labels, NullString(comment), At(now)
}

func (st *Step) green() bool { return st.ReviewStatus == ReviewCompleted && st.ReviewAnswer == Green }
func (st *Step) final() bool { return st.ReviewAnswer == Red && st.ReviewRejectType == RejectFinal }
func (st *Step) retry() bool { return st.ReviewAnswer == Red && st.ReviewRejectType == RejectRetry }

// rank orders review statuses from least to most advanced.
func rank(status string) int {
	switch status {
	case ReviewPending, ReviewExpired:
		return 0
	case ReviewSubmitted:
		return 1
	case ReviewInReview:
		return 2
	case ReviewAwaiting:
		return 3
	}
	return 4
}

// recompute derives the aggregate review from the required steps: RED if
// any is RED, GREEN when all are GREEN, the least advanced status.
func (a *diskApplicant) recompute() {
	r := &a.Review
	status, minRank := ReviewCompleted, 5
	red, green, anyRequired := false, true, false
	final, retry := false, false
	labels := []string{}
	for i := range a.Steps {
		st := &a.Steps[i]
		if st.Optional {
			continue
		}
		anyRequired = true
		if k := rank(st.ReviewStatus); k < minRank || (k == minRank && st.ReviewStatus == ReviewPending) {
			status, minRank = st.ReviewStatus, k
		}
		if st.ReviewAnswer == Red {
			red = true
			final = final || st.ReviewRejectType == RejectFinal
			retry = retry || st.ReviewRejectType == RejectRetry
			for _, l := range st.RejectLabels {
				if !inList(labels, l) {
					labels = append(labels, l)
				}
			}
		}
		if !st.green() {
			green = false
		}
	}
	if !anyRequired {
		status, green = ReviewPending, false
	}
	r.ReviewStatus, r.RejectLabels = status, labels
	switch {
	case red:
		r.ReviewAnswer = Red
		switch {
		case final:
			r.ReviewRejectType = RejectFinal
		case retry:
			r.ReviewRejectType = RejectRetry
		default:
			r.ReviewRejectType = RejectExpire
		}
	case green:
		r.ReviewAnswer, r.ReviewRejectType = Green, ""
	default:
		r.ReviewAnswer, r.ReviewRejectType = "", ""
	}
	a.applyChildren() // UBO hook (store/kyb_company.go): a company's verdict waits for its children
	if a.Type == TypeCompany && r.closed() {
		a.ClosedFinal = r.finalRed() // kept while a new row or a reopened child holds it open
	}
	if r.ReviewAnswer == "" {
		r.ModerationComment, r.ReviewedAtUtc = "", Time{}
	}
}

// finalRed reports a closed RED FINAL verdict.
func (r Review) finalRed() bool {
	return r.ReviewStatus == ReviewCompleted && r.ReviewAnswer == Red && r.ReviewRejectType == RejectFinal
}

// terminal reports a final verdict: GREEN, or RED FINAL.
func (r Review) terminal() bool {
	return r.ReviewStatus == ReviewCompleted && (r.ReviewAnswer == Green || r.ReviewRejectType == RejectFinal)
}

// hasStep reports whether the applicant has a step of kind.
func (a *diskApplicant) hasStep(kind string) bool {
	for _, st := range a.Steps {
		if st.Kind == kind {
			return true
		}
	}
	return false
}

// hasData reports whether the applicant supplied what step kind needs.
func (a *diskApplicant) hasData(kind string, l Level) bool {
	count := func(k, side string) int {
		n := 0
		for _, d := range a.Documents {
			if d.Kind == k && (side == "" || d.Side == "" || string(d.Side) == side) {
				n++
			}
		}
		return n
	}
	switch kind {
	case StepIdentityDoc:
		return count(StepIdentityDoc, "front") > 0
	case StepSelfie:
		return count(StepSelfie, "") > 0
	case StepLiveness:
		return count(StepLiveness, "") >= 3
	case StepPOA:
		return count(StepPOA, "") > 0
	case StepQuestionnaire:
		if a.Answers != nil {
			return true
		}
		for _, q := range l.Questionnaire {
			if q.Required {
				return false
			}
		}
		return true
	case StepCompanyDocs:
		if len(l.CompanyRequiredDocuments) == 0 {
			return count(StepCompanyDocs, "") > 0
		}
		for _, dt := range l.CompanyRequiredDocuments {
			found := false
			for _, d := range a.Documents {
				if d.Kind == StepCompanyDocs && string(d.DocType) == dt {
					found = true
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return true // aml and adverse_media run by themselves
}

// selfSupplied reports whether step kind takes nothing from the applicant
// that a resubmission could replace: aml and adverse_media run by
// themselves, and a questionnaire without a required question is complete
// as it stands. Such a step rejected with RETRY is reviewed again with the
// next submission instead of waiting for data that cannot come.
func selfSupplied(kind string, l Level) bool {
	if screeningStep(kind) {
		return true
	}
	if kind != StepQuestionnaire {
		return false
	}
	for _, q := range l.Questionnaire {
		if q.Required {
			return false
		}
	}
	return true
}

// dataArrived records that new data for step kind arrived: a step waiting
// for data (pending, expired, or RED RETRY) that now has what it needs goes
// to submitted (SPEC 3.3). A FINAL step holds until reset; a step under
// review is left alone.
func (a *diskApplicant) dataArrived(kind string, l Level, now time.Time) {
	for i := range a.Steps {
		st := &a.Steps[i]
		if st.Kind != kind || !a.hasData(kind, l) {
			continue
		}
		if st.ReviewStatus == ReviewPending || st.ReviewStatus == ReviewExpired || st.retry() {
			st.set(now, ReviewSubmitted, "", "", nil, "")
		}
	}
}

// dataHeld moves to submitted every pending step for which the applicant
// already holds data (after a level change rebuilt the steps). Screening
// steps hold no data of the applicant; they run at submission.
func (a *diskApplicant) dataHeld(l Level, now time.Time) {
	for _, st := range a.Steps {
		if screeningStep(st.Kind) || (st.Kind == StepQuestionnaire && a.Answers == nil) {
			continue
		}
		a.dataArrived(st.Kind, l, now)
	}
}

// checkSubmittable returns ECONFLICT unless every required step can go to
// review: GREEN already, submitted, or pending with data.
func (a *diskApplicant) checkSubmittable(l Level) error {
	if a.erased() {
		return Conflict("applicant_erased", "applicant %q was erased", a.ExternalID)
	}
	if a.Status != StatusActive {
		return Conflict("applicant_inactive", "applicant %q is %s", a.ExternalID, a.Status)
	}
	if a.inFlight() && a.InReview {
		return Conflict("review_in_progress", "a review of applicant %q is in progress", a.ExternalID)
	}
	if a.Type == TypeCompany {
		for _, f := range l.CompanyRequiredFields {
			if a.Fields[f] == "" {
				return &Error{Code: ECONFLICT, Reason: "missing_step_data", Field: f,
					Message: "the level requires company field " + f + " before review: set it (PATCH /v1/applicants/{id}, or the hosted page's company data)"}
			}
		}
	}
	if a.Review.finalRed() || a.ClosedFinal {
		return Conflict("review_final", "applicant %q was rejected with FINAL; reset it first", a.ExternalID)
	}
	something := false
	for i := range a.Steps {
		st := &a.Steps[i]
		switch {
		case st.green():
		case st.final() && st.ReviewStatus == ReviewCompleted:
			if !st.Optional {
				return Conflict("review_final", "step %s was rejected with FINAL; reset the applicant first", st.Kind)
			}
		case st.retry() && selfSupplied(st.Kind, l):
			// Runs again with the submission: on a level whose required
			// steps all take nothing from the applicant (screening only),
			// it is what the submission brings, or a RETRY there could
			// never be answered short of a reset.
			something = true
		case st.retry():
			if !st.Optional {
				return &Error{Code: ECONFLICT, Reason: "missing_step_data", Field: st.Kind,
					Message: "step " + st.Kind + " was rejected with RETRY and has no new data"}
			}
		case st.ReviewStatus == ReviewSubmitted:
			something = true
		case a.hasData(st.Kind, l):
			something = true
		case !st.Optional:
			return &Error{Code: ECONFLICT, Reason: "missing_step_data", Field: st.Kind,
				Message: "required step " + st.Kind + " has no data"}
		}
	}
	if !something {
		return Conflict("nothing_to_review", "no step of applicant %q has data waiting for review (every step is reviewed already, or optional without data)", a.ExternalID)
	}
	if a.Review.ReviewStatus == ReviewCompleted && a.Review.ReviewAnswer == Green {
		// Terminal (SPEC §3.5): new data of an optional step under review
		// would sit beside a verdict it cannot change.
		return Conflict("review_completed", "applicant %q was approved (GREEN); reset it to review new data", a.ExternalID)
	}
	return nil
}

// submitSteps moves every step that has data and no verdict to in_review
// (the reviewer has it) and returns the kinds of screening steps that now
// run. Screening runs at every submission (SPEC §3.4), GREEN before or
// not: a resubmission after RED RETRY may bring another name, and a
// screening of the name the applicant had is no screening of the one it
// has.
func (a *diskApplicant) submitSteps(l Level, now time.Time) []string {
	var screens []string
	for i := range a.Steps {
		st := &a.Steps[i]
		if (st.green() && !screeningStep(st.Kind)) || (st.ReviewAnswer == Red && st.ReviewRejectType != RejectExpire && !(st.retry() && selfSupplied(st.Kind, l))) {
			continue
		}
		if st.ReviewStatus == ReviewSubmitted || a.hasData(st.Kind, l) {
			st.set(now, ReviewInReview, "", "", nil, "")
			if screeningStep(st.Kind) {
				screens = append(screens, st.Kind)
			}
		}
	}
	return screens
}

// StepsView is the body of GET …/steps (seed 2.3).
type StepsView struct {
	ExternalUserID string `json:"externalUserId"`
	LevelID        string `json:"levelId"`
	LevelName      string `json:"levelName"`
	Steps          []Step `json:"steps"`
}

// StatusView is the body of GET …/status (SPEC 3.3).
type StatusView struct {
	ExternalUserID string `json:"externalUserId"`
	ApplicantID    string `json:"applicantId"`
	LevelName      string `json:"levelName"`
	Review
	Attempt int `json:"attempt"`
}

func (a *diskApplicant) status() StatusView {
	v := StatusView{ExternalUserID: a.ExternalID, ApplicantID: a.ID, LevelName: a.Level, Review: a.Review, Attempt: a.Attempt}
	if v.RejectLabels == nil {
		v.RejectLabels = []string{}
	}
	return v
}

// Status returns the applicant's aggregate verdict. Returns ENOTFOUND.
func (s *Store) Status(env Env, extID string) (StatusView, error) {
	var out StatusView
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = a.status()
		return nil
	})
	return out, err
}

// Steps returns the applicant's steps. Returns ENOTFOUND.
func (s *Store) Steps(env Env, extID string) (StepsView, error) {
	var out StepsView
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		out = StepsView{ExternalUserID: a.ExternalID, LevelName: a.Level, Steps: a.Steps}
		if d, err := t.getLevel(env, a.Level); err == nil {
			out.LevelID = d.ID
		}
		for i := range out.Steps {
			if out.Steps[i].RejectLabels == nil {
				out.Steps[i].RejectLabels = []string{}
			}
		}
		return nil
	})
	return out, err
}
