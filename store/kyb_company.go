package store

import (
	"slices"
	"strings"
	"time"
)

// The company structure (seed 2.8), child applicants spawned from rows and
// the company verdict that waits for them (SPEC 3.6).

// Bounds of spawn-kyc and regenerate-link.
const (
	DefaultLinkTTLDays = 7
	MaxLinkTTLDays     = 30
)

// structureFlags are a company's negative declarations.
type structureFlags struct {
	HasNoUbos            bool `json:"hasNoUbos"`
	HasNoShareholders    bool `json:"hasNoShareholders"`
	HasNoDirectors       bool `json:"hasNoDirectors"`
	HasNoRepresentatives bool `json:"hasNoRepresentatives"`
}

// StructureCounts are the counts of the company structure.
type StructureCounts struct {
	Total           int `json:"total"`
	Ubos            int `json:"ubos"`
	Directors       int `json:"directors"`
	Shareholders    int `json:"shareholders"`
	Representatives int `json:"representatives"`
	Spawned         int `json:"spawned"`
	Completed       int `json:"completed"`
	Rejected        int `json:"rejected"`
	Pending         int `json:"pending"`
}

// CompanyStructure is the body of GET …/company-structure (seed 2.8).
type CompanyStructure struct {
	ExternalUserID string `json:"externalUserId"`
	structureFlags
	Counts                  StructureCounts `json:"counts"`
	AllChildrenComplete     bool            `json:"allChildrenComplete"`
	LastChildCompletedAtUtc Time            `json:"lastChildCompletedAtUtc"`
}

func (a *diskApplicant) counts() StructureCounts {
	var c StructureCounts
	for i := range a.Ubos {
		r := &a.Ubos[i]
		c.Total++
		for role, n := range map[string]*int{"ubo": &c.Ubos, "director": &c.Directors, "shareholder": &c.Shareholders,
			"representative": &c.Representatives} {
			if r.has(role) {
				*n++
			}
		}
		if !r.spawned() {
			continue
		}
		c.Spawned++
		switch r.EnrollmentStatus {
		case EnrollmentCompleted:
			c.Completed++
		case EnrollmentRejected:
			c.Rejected++
		}
	}
	c.Pending = c.Spawned - c.Completed - c.Rejected
	return c
}

// allChildrenComplete: at least one row, every row spawned, and every child
// terminal. A row never spawned is not complete (SPEC 3.6).
func (c StructureCounts) allChildrenComplete() bool {
	return c.Total > 0 && c.Spawned == c.Total && c.Pending == 0
}

func (a *diskApplicant) structure() CompanyStructure {
	out := CompanyStructure{ExternalUserID: a.ExternalID, Counts: a.counts()}
	if a.Structure != nil {
		out.structureFlags = *a.Structure
	}
	out.AllChildrenComplete = out.Counts.allChildrenComplete()
	for i := range a.Ubos {
		if at := a.Ubos[i].CompletedAt; at.After(out.LastChildCompletedAtUtc.Time) {
			out.LastChildCompletedAtUtc = at
		}
	}
	return out
}

// applyChildren lays the children over the aggregate verdict recompute
// derived from the company's own steps (SPEC 3.6): while its own steps are
// completed and a row has no terminal child (never spawned, or its child
// still in flight) the company is in_review; once every child is terminal it is GREEN
// when its own steps and every child are GREEN, otherwise RED FINAL with
// its own labels plus COMPANY_NOT_VALIDATED_BENEFICIARIES when a child is
// RED. A company without rows keeps its own verdict.
func (a *diskApplicant) applyChildren() {
	r := &a.Review
	if a.Type != TypeCompany || len(a.Ubos) == 0 || r.ReviewStatus != ReviewCompleted {
		return
	}
	c := a.counts()
	if !c.allChildrenComplete() {
		r.ReviewStatus, r.ReviewAnswer, r.ReviewRejectType = ReviewInReview, "", ""
		r.RejectLabels, r.ModerationComment, r.ReviewedAtUtc = []string{}, "", Time{}
		return
	}
	if r.ReviewAnswer == Green && c.Rejected == 0 {
		return
	}
	r.ReviewAnswer, r.ReviewRejectType = Red, RejectFinal
	if c.Rejected > 0 && !inList(r.RejectLabels, "COMPANY_NOT_VALIDATED_BENEFICIARIES") {
		r.RejectLabels = append(append([]string{}, r.RejectLabels...), "COMPANY_NOT_VALIDATED_BENEFICIARIES")
	}
}

// stepsComment is the moderation comment of the applicant's own required
// steps: a decision gives every step it decides the same one.
func (a *diskApplicant) stepsComment() string {
	for _, st := range a.Steps {
		if !st.Optional && st.ModerationComment != "" {
			return string(st.ModerationComment)
		}
	}
	return ""
}

func (r Review) closed() bool { return r.ReviewStatus == ReviewCompleted && r.ReviewAnswer != "" }

// sameVerdict reports whether a and b are the same verdict: answer, reject
// type and labels.
func sameVerdict(a, b Review) bool {
	return a.ReviewAnswer == b.ReviewAnswer && a.ReviewRejectType == b.ReviewRejectType && slices.Equal(a.RejectLabels, b.RejectLabels)
}

// saveCompany saves a company whose rows changed. When that closes its
// verdict (its last child became terminal), or changes the verdict of a
// closed company (a terminal child's verdict changed: GREEN, then RED), it
// records the verdict and emits applicantReviewed, as verdict does for its
// own steps; when it reopens a closed verdict it emits applicantPending:
// the partner's last event always says what the status says.
func (t *txn) saveCompany(env Env, a *diskApplicant) error {
	// The verdict as stored, not a's: a nested save in the same
	// transaction (a child's reset moving its row) may have saved the
	// company already, and its event must not repeat.
	var was Review
	switch stored, err := t.getApplicant(env, a.ExternalID); {
	case err == nil:
		was = stored.Review
	case ErrorCode(err) != ENOTFOUND:
		return err
	}
	if err := t.save(env, a); err != nil {
		return err
	}
	if was.closed() && !a.Review.closed() {
		// Reopened (a row added, a child reset or its link regenerated):
		// the verdict the partner holds is withdrawn until it closes
		// again; applicantPending says so, and so does the review
		// history, whose newest verdict would otherwise still stand.
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSystem, Details: map[string]any{
			"action": "review.reopened", "previousReviewAnswer": was.ReviewAnswer, "reviewStatus": a.Review.ReviewStatus,
		}}); err != nil {
			return err
		}
		return t.event(env, a, "applicantPending", map[string]any{"attempt": a.Attempt})
	}
	if !a.Review.closed() || (was.closed() && sameVerdict(was, a.Review)) {
		return nil
	}
	// The verdict closes now; its comment is the one its own steps carry
	// (an operator's decision made while the children were still open).
	a.Review.ReviewedAtUtc, a.Review.ModerationComment = At(t.now), NullString(a.stepsComment())
	// The risk follows the verdict that closed, not the own steps' alone:
	// a company closed RED FINAL over a rejected owner is high risk.
	a.RiskLevel = a.Review.risk()
	if err := t.putApplicant(env, a); err != nil {
		return err
	}
	eventType := "applicant.approved"
	if a.Review.ReviewAnswer == Red {
		eventType = "applicant.rejected"
	}
	c := a.counts()
	if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: eventType, ActorType: ActorSystem, Details: map[string]any{
		"reviewAnswer": a.Review.ReviewAnswer, "reviewRejectType": a.Review.ReviewRejectType,
		"rejectLabels": a.Review.RejectLabels, "attempt": a.Attempt,
		"children": map[string]int{"completed": c.Completed, "rejected": c.Rejected},
	}}); err != nil {
		return err
	}
	if !a.SessionEnd.IsZero() {
		// Enrolled through a hosted-UI session: as verdict records it.
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "enrollment.completed", ActorType: ActorSystem,
			Details: map[string]any{"reviewAnswer": a.Review.ReviewAnswer}}); err != nil {
			return err
		}
	}
	return t.event(env, a, "applicantReviewed", nil)
}

// childEnrollment derives a row's enrollment status from its child. A
// child erased before a terminal verdict can never be verified (its data
// is gone, and spawn-kyc and regenerate-link refuse it): its row is
// rejected, so that the company closes RED rather than wait for ever.
func childEnrollment(c *diskApplicant) string {
	r := c.Review
	switch {
	case r.terminal() && r.ReviewAnswer == Green:
		return EnrollmentCompleted
	case r.terminal(), c.erased():
		return EnrollmentRejected
	case r.ReviewStatus == ReviewCompleted && r.ReviewAnswer == Red && r.ReviewRejectType == RejectRetry:
		return EnrollmentFailed
	case r.ReviewStatus == ReviewExpired:
		return EnrollmentExpired
	}
	return EnrollmentPending
}

// syncChild carries a child applicant's state to its row in the company:
// enrollmentStatus, completedAtUtc, and through saveCompany the company's
// verdict. Callers: the verdict path, reset, link expiry and erasure of
// the child.
// Anything that is not a child is left alone.
func (t *txn) syncChild(env Env, c *diskApplicant) error {
	if c.UboParent == "" {
		return nil
	}
	p, err := t.getApplicant(env, c.UboParent)
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return nil
		}
		return err
	}
	if c.UboIndex >= len(p.Ubos) || p.Ubos[c.UboIndex].LinkedApplicantID != c.ID {
		return nil
	}
	if p.erased() {
		// Erasure voided the company's review: a child's later verdict
		// neither moves its row nor closes it (no verdict, no event for
		// data that is gone).
		return nil
	}
	r := &p.Ubos[c.UboIndex]
	status := childEnrollment(c)
	if status == r.EnrollmentStatus {
		return nil
	}
	r.EnrollmentStatus, r.UpdatedAt, r.CompletedAt = status, At(t.now), Time{}
	if status == EnrollmentCompleted || status == EnrollmentRejected {
		r.CompletedAt = At(t.now)
	}
	if err := t.appendInternal(env, p.ID, "ubo.child_"+status, map[string]any{"uboIndex": c.UboIndex,
		"childExternalUserId": c.ExternalID, "reviewAnswer": c.Review.ReviewAnswer}); err != nil {
		return err
	}
	return t.saveCompany(env, p)
}

// syncChildData carries a child's new data to its row: once the child has
// data again (it submitted, or a RETRY step took new data) a failed or
// expired row is pending again. Verdicts reach the row through syncChild,
// after the child's own applicantReviewed, so events keep their order.
func (t *txn) syncChildData(env Env, c *diskApplicant) error {
	if c.UboParent == "" || childEnrollment(c) != EnrollmentPending {
		return nil
	}
	return t.syncChild(env, c)
}

// CompanyStructure returns a company's structure. Returns ENOTFOUND and
// EINVALID not_a_company.
func (s *Store) CompanyStructure(env Env, extID string) (CompanyStructure, error) {
	var out CompanyStructure
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		out = a.structure()
		return nil
	})
	return out, err
}

// StructureInput is the body of PATCH …/company-structure: the flags sent
// change, the others stay.
type StructureInput struct {
	HasNoUbos            *bool `json:"hasNoUbos"`
	HasNoShareholders    *bool `json:"hasNoShareholders"`
	HasNoDirectors       *bool `json:"hasNoDirectors"`
	HasNoRepresentatives *bool `json:"hasNoRepresentatives"`
}

// PatchCompanyStructure sets the negative declarations. Returns ENOTFOUND,
// EINVALID not_a_company and ECONFLICT applicant_erased.
func (s *Store) PatchCompanyStructure(env Env, extID string, in StructureInput) (CompanyStructure, error) {
	var out CompanyStructure
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		if err := a.acceptsEdits(); err != nil {
			return err
		}
		f := structureFlags{}
		if a.Structure != nil {
			f = *a.Structure
		}
		before := f
		for _, x := range []struct {
			in  *bool
			out *bool
		}{{in.HasNoUbos, &f.HasNoUbos}, {in.HasNoShareholders, &f.HasNoShareholders},
			{in.HasNoDirectors, &f.HasNoDirectors}, {in.HasNoRepresentatives, &f.HasNoRepresentatives}} {
			if x.in != nil {
				*x.out = *x.in
			}
		}
		if f != before {
			a.Structure = &f
			if err := t.saveCompany(env, a); err != nil {
				return err
			}
			if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
				Details: map[string]any{"action": "company_structure.updated", "hasNoUbos": f.HasNoUbos,
					"hasNoShareholders": f.HasNoShareholders, "hasNoDirectors": f.HasNoDirectors,
					"hasNoRepresentatives": f.HasNoRepresentatives}}); err != nil {
				return err
			}
		}
		out = a.structure()
		return nil
	})
	return out, err
}

// LinkInput is the body of spawn-kyc and regenerate-link.
type LinkInput struct {
	TTLDays   *int    `json:"ttlDays"`
	Lang      string  `json:"lang"`
	Theme     string  `json:"theme"`
	ReturnURL string  `json:"returnUrl"`
	LevelName *string `json:"levelName"` // spawn-kyc only
}

// validate applies defaults and checks the input. Returns EINVALID naming
// the field.
func (in *LinkInput) validate() (SessionInput, time.Duration, error) {
	days := DefaultLinkTTLDays
	if in.TTLDays != nil {
		days = *in.TTLDays
		if days < 1 || days > MaxLinkTTLDays {
			return SessionInput{}, 0, Invalid("ttlDays", "ttlDays must be an integer from 1 to %d", MaxLinkTTLDays)
		}
	}
	si := SessionInput{Lang: in.Lang, Theme: in.Theme, ReturnURL: in.ReturnURL}
	if _, err := si.validate(); err != nil {
		return si, 0, err
	}
	if in.LevelName != nil && strings.TrimSpace(*in.LevelName) == "" {
		return si, 0, Invalid("levelName", "levelName must name a level")
	}
	return si, time.Duration(days) * 24 * time.Hour, nil
}

// SDKLink is a child's hosted-UI link (seed 2.10).
type SDKLink struct {
	URL          string `json:"url"`
	ShortCode    string `json:"shortCode"`
	ShortURL     string `json:"shortUrl"`
	ExpiresAtUtc Time   `json:"expiresAtUtc"`
	Token        string `json:"token"`
}

// ChildLink is the answer of spawn-kyc (seed 2.10) and regenerate-link.
type ChildLink struct {
	UboIndex            int     `json:"uboIndex"`
	ChildApplicantID    string  `json:"childApplicantId"`
	ChildExternalUserID string  `json:"childExternalUserId"`
	AlreadyLinked       bool    `json:"alreadyLinked"`
	SDKLink             SDKLink `json:"sdkLink"`
	Row                 UboRow  `json:"row"`
}

// splitName splits a full name at the last space: "Ada King Lovelace" is
// first name "Ada King", last name "Lovelace". One word is a last name.
func splitName(full string) (first, last string) {
	full = strings.Join(strings.Fields(full), " ")
	i := strings.LastIndexByte(full, ' ')
	if i < 0 {
		return "", full
	}
	return full[:i], full[i+1:]
}

// childExternalID is the externalUserId of row's child.
func childExternalID(parent string, r *uboRow) string { return parent + ".ubo." + itoa(r.Number) }

// SpawnKYC creates the row's child individual applicant, prefilled and
// locked with the row's names and date of birth, and mints its hosted-UI
// link; on a row already linked it mints a fresh link for the same child
// (alreadyLinked). The check and the creation are one transaction, so
// concurrent calls make one child. Every call that passes validation counts
// towards credKey's hourly limit. Returns ENOTFOUND (applicant,
// ubo_not_found, level_not_found), EINVALID (not_a_company, naming the
// field), ECONFLICT (applicant_erased, applicant_inactive, child_id_taken)
// and ERATELIMIT.
func (s *Store) SpawnKYC(env Env, credKey, extID, index string, in LinkInput) (ChildLink, error) {
	si, ttl, err := in.validate()
	if err != nil {
		return ChildLink{}, err
	}
	var out ChildLink
	err = s.updateIn(env, func(t *txn) error {
		p, err := t.company(env, extID)
		if err != nil {
			return err
		}
		i, r, err := p.row(index)
		if err != nil {
			return err
		}
		if err := p.acceptsEdits(); err != nil {
			return err
		}
		if err := t.take(env, spawnLimitKey(credKey), "spawn-kyc", s.settings.SpawnRateLimitPerHour, time.Hour); err != nil {
			return err
		}
		var c *diskApplicant
		linked := r.spawned()
		if linked {
			if c, err = t.getApplicant(env, r.ChildExternalID); err != nil {
				return err
			}
		} else if c, err = t.spawnChild(env, p, i, in.LevelName); err != nil {
			return err
		}
		x, err := t.mintChildLink(env, p, i, c, t.keptLinkSettings(env, r, in, si), ttl, map[string]any{"uboIndex": i, "parentExternalUserId": p.ExternalID})
		if err != nil {
			return err
		}
		if !linked {
			r := &p.Ubos[i]
			r.LinkedApplicantID, r.ChildExternalID, r.SpawnedAt = c.ID, c.ExternalID, At(t.now)
			if err := t.appendHistory(env, p.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
				Details: map[string]any{"action": "ubo.spawned", "uboIndex": i, "childExternalUserId": c.ExternalID}}); err != nil {
				return err
			}
		}
		if err := t.saveCompany(env, p); err != nil {
			return err
		}
		out = ChildLink{UboIndex: i, ChildApplicantID: c.ID, ChildExternalUserID: c.ExternalID, AlreadyLinked: linked,
			SDKLink: s.sdkLink(x), Row: p.Ubos[i].view(i)}
		return nil
	})
	return out, err
}

// acceptsEdits returns ECONFLICT for an applicant whose data cannot change:
// erased, deactivated or blocklisted (data calls on an inactive applicant
// are 409, as its uploads are). Status actions, a reset and a level change
// are not data calls and stay open.
func (a *diskApplicant) acceptsEdits() error {
	if a.erased() {
		return Conflict("applicant_erased", "applicant %q was erased", a.ExternalID)
	}
	if a.Status != StatusActive {
		return Conflict("applicant_inactive", "applicant %q is %s", a.ExternalID, a.Status)
	}
	return nil
}

// spawnChild creates the child applicant of row i of company p.
func (t *txn) spawnChild(env Env, p *diskApplicant, i int, levelName *string) (*diskApplicant, error) {
	name := t.s.settings.KYC.UBOLevel
	if levelName != nil {
		name = *levelName
	}
	lvl, err := t.getLevel(env, name)
	if err != nil {
		return nil, err
	}
	if lvl.ApplicantType != TypeIndividual {
		return nil, Invalid("levelName", "level %q is for %s applicants; a child is an individual", name, lvl.ApplicantType)
	}
	r := &p.Ubos[i]
	extID := childExternalID(p.ExternalID, r)
	if t.env(env, "applicants").Get([]byte(extID)) != nil {
		return nil, Conflict("child_id_taken", "an applicant %q exists already; it was not spawned from this row", extID)
	}
	c := &diskApplicant{
		ID: newID(), ExternalID: extID, Type: TypeIndividual, Level: lvl.Name, Status: StatusActive, RiskLevel: RiskUnknown,
		Fields: map[string]string{}, Steps: newSteps(lvl.Level, t.now), CreatedAt: At(t.now),
	}
	c.UboParent, c.UboIndex = p.ExternalID, i
	first, last := splitName(r.FullName)
	for f, v := range map[string]string{"firstName": first, "lastName": last, "dateOfBirth": r.DateOfBirth} {
		if v == "" || !inList(lvl.enabledFields(), f) {
			continue
		}
		if v, err = normalizeField(f, v, t.now); err != nil {
			return nil, err
		}
		c.Fields[f] = v
		c.lock(f)
	}
	if c.Seq, err = index(t.env(env, "applicants_idx"), extID); err != nil {
		return nil, err
	}
	if err := t.env(env, "applicant_ids").Put([]byte(c.ID), []byte(extID)); err != nil {
		return nil, err
	}
	if err := t.useLevel(env, lvl); err != nil {
		return nil, err
	}
	if err := t.save(env, c); err != nil {
		return nil, err
	}
	if err := t.appendHistory(env, c.ID, HistoryEntry{EventType: "applicant.created", ActorType: ActorPartner,
		Details: map[string]any{"type": TypeIndividual, "levelName": lvl.Name, "lockedFields": orEmpty(c.Locked),
			"parentExternalUserId": p.ExternalID, "uboIndex": i}}); err != nil {
		return nil, err
	}
	return c, t.event(env, c, "applicantCreated", map[string]any{"parentExternalUserId": p.ExternalID})
}

// mintChildLink mints a hosted-UI session for child c of row i and puts it
// on the row. Expired steps of the child go back to pending, as a new
// session does for any applicant. The caller saves p.
// keptLinkSettings returns si, the settings of a row's new link, with the
// language, theme and returnUrl of the row's last link where the call (in)
// left them out: a regenerated or repeated link goes on in the language
// the owner was first written to, and back to the partner's page. A last
// link retention removed leaves the defaults.
func (t *txn) keptLinkSettings(env Env, r *uboRow, in LinkInput, si SessionInput) SessionInput {
	_, token, ok := strings.Cut(r.LinkURL, "/sdk/")
	if !ok {
		return si
	}
	prev, found, err := t.getSession(env, token)
	if err != nil || !found {
		return si
	}
	if in.Lang == "" {
		si.Lang = prev.Lang
	}
	if in.Theme == "" {
		si.Theme = prev.Theme
	}
	if in.ReturnURL == "" {
		si.ReturnURL = prev.ReturnURL
	}
	return si
}

func (t *txn) mintChildLink(env Env, p *diskApplicant, i int, c *diskApplicant, si SessionInput, ttl time.Duration, details map[string]any) (Session, error) {
	if c.erased() {
		return Session{}, Conflict("applicant_erased", "child applicant %q was erased", c.ExternalID)
	}
	if c.Status != StatusActive {
		return Session{}, Conflict("applicant_inactive", "child applicant %q is %s", c.ExternalID, c.Status)
	}
	x, err := t.newSession(env, c, si, ttl)
	if err != nil {
		return x, err
	}
	for j := range c.Steps {
		if st := &c.Steps[j]; st.ReviewStatus == ReviewExpired {
			st.set(t.now, ReviewPending, "", "", nil, "")
		}
	}
	if err := t.save(env, c); err != nil {
		return x, err
	}
	details["expiresAt"], details["lang"], details["theme"] = x.ExpiresAt, x.Lang, x.Theme
	if err := t.appendHistory(env, c.ID, HistoryEntry{EventType: "enrollment.created", ActorType: ActorPartner, Details: details}); err != nil {
		return x, err
	}
	r := &p.Ubos[i]
	r.LinkURL, r.LinkExpiresAt, r.UpdatedAt = t.s.sessionLink(x).URL, x.ExpiresAt, At(t.now)
	if r.EnrollmentStatus == EnrollmentNone || r.EnrollmentStatus == EnrollmentExpired {
		r.EnrollmentStatus = EnrollmentPending
	}
	return x, nil
}

func (s *Store) sdkLink(x Session) SDKLink {
	l := s.sessionLink(x)
	return SDKLink{URL: l.URL, ShortCode: l.ShortCode, ShortURL: l.ShortURL, ExpiresAtUtc: l.ExpiresAt, Token: l.Token}
}

// RegenerateLink mints a fresh link for a row's child without spawning
// anything, and clears a rejected, failed or expired enrollment back to
// pending: a child rejected with FINAL is reset so the fresh link can
// collect new data. At most Settings.RegenerateLinkPerChildCapPer24h calls
// per row in any 24 hours. Returns ENOTFOUND (applicant, ubo_not_found),
// EINVALID (not_a_company, naming the field), ECONFLICT (not_spawned,
// applicant_erased, applicant_inactive) and ERATELIMIT.
func (s *Store) RegenerateLink(env Env, extID, index string, in LinkInput) (ChildLink, error) {
	in.LevelName = nil
	si, ttl, err := in.validate()
	if err != nil {
		return ChildLink{}, err
	}
	var out ChildLink
	err = s.updateIn(env, func(t *txn) error {
		p, err := t.company(env, extID)
		if err != nil {
			return err
		}
		i, r, err := p.row(index)
		if err != nil {
			return err
		}
		if !r.spawned() {
			return Conflict("not_spawned", "row %d has no child applicant yet; call spawn-kyc first", i)
		}
		if err := p.acceptsEdits(); err != nil {
			return err
		}
		if err := t.take(env, regenerateLimitKey(p.ID, i), "regenerate-link", s.settings.RegenerateLinkPerChildCapPer24h, 24*time.Hour); err != nil {
			return err
		}
		c, err := t.getApplicant(env, r.ChildExternalID)
		if err != nil {
			return err
		}
		previous := r.EnrollmentStatus
		if previous == EnrollmentRejected && !c.erased() {
			if err := t.resetChild(env, c); err != nil {
				return err
			}
		}
		x, err := t.mintChildLink(env, p, i, c, t.keptLinkSettings(env, r, in, si), ttl, map[string]any{"uboIndex": i, "parentExternalUserId": p.ExternalID,
			"regenerated": true})
		if err != nil {
			return err
		}
		r = &p.Ubos[i]
		switch previous {
		case EnrollmentRejected, EnrollmentFailed, EnrollmentExpired:
			r.EnrollmentStatus, r.CompletedAt = EnrollmentPending, Time{}
		}
		if err := t.appendHistory(env, p.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
			Details: map[string]any{"action": "ubo.link_regenerated", "uboIndex": i, "previousEnrollmentStatus": previous}}); err != nil {
			return err
		}
		if err := t.saveCompany(env, p); err != nil {
			return err
		}
		out = ChildLink{UboIndex: i, ChildApplicantID: c.ID, ChildExternalUserID: c.ExternalID, AlreadyLinked: true,
			SDKLink: s.sdkLink(x), Row: p.Ubos[i].view(i)}
		return nil
	})
	return out, err
}

// resetChild puts a child rejected with FINAL back to pending, as POST
// …/reset does, so that it can take new data.
func (t *txn) resetChild(env Env, c *diskApplicant) error {
	if err := t.unschedule(c.ReviewJob); err != nil {
		return err
	}
	c.ReviewJob, c.InReview, c.RiskLevel = nil, false, RiskUnknown
	for i := range c.Steps {
		c.Steps[i].set(t.now, ReviewPending, "", "", nil, "")
	}
	if err := t.save(env, c); err != nil {
		return err
	}
	if err := t.appendHistory(env, c.ID, HistoryEntry{EventType: "applicant.reset", ActorType: ActorPartner,
		Details: map[string]any{"reason": "regenerate-link"}}); err != nil {
		return err
	}
	return t.event(env, c, "applicantReset", nil)
}
