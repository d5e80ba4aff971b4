package store

import "cmp"

// SendToReview submits the applicant (POST …/review). In the sandbox the
// reviewer runs after review_delay; in production the automatic checks run
// and the applicant waits for an operator. Returns ENOTFOUND and ECONFLICT
// (missing_step_data when a required step has no data).
func (s *Store) SendToReview(env Env, extID string) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		l, err := t.applicantLevel(env, a)
		if err != nil {
			return err
		}
		return t.submit(env, a, l, false)
	})
}

// Reset puts every step back to pending and clears the review. Documents
// and data stay. Returns ENOTFOUND and ECONFLICT for an erased applicant.
func (s *Store) Reset(env Env, extID string) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		if err := t.unschedule(a.ReviewJob); err != nil {
			return err
		}
		a.ReviewJob, a.InReview, a.RiskLevel, a.ClosedFinal = nil, false, RiskUnknown, false
		for i := range a.Steps {
			a.Steps[i].set(t.now, ReviewPending, "", "", nil, "")
		}
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.reset", ActorType: ActorPartner}); err != nil {
			return err
		}
		if err := t.event(env, a, "applicantReset", nil); err != nil {
			return err
		}
		return t.syncChild(env, a) // UBO hook (store/kyb_company.go): a reset child's row is pending again
	})
}

// setStatus moves the applicant between active, deactivated and
// blocklisted. A call that changes nothing answers the applicant as is.
func (s *Store) setStatus(env Env, extID string, from []string, to, historyType, eventType string) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		if a.Status == to {
			return nil
		}
		if !inList(from, a.Status) {
			return Conflict("applicant_"+a.Status, "applicant %q is %s", extID, a.Status)
		}
		if to == StatusBlocklisted {
			a.BlockedFrom = a.Status
		}
		a.Status = to
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: historyType, ActorType: ActorPartner}); err != nil {
			return err
		}
		if eventType == "" {
			return nil
		}
		return t.event(env, a, eventType, nil)
	})
}

// Deactivate deactivates an active applicant. Returns ENOTFOUND and
// ECONFLICT applicant_blocklisted.
func (s *Store) Deactivate(env Env, extID string) (Applicant, error) {
	return s.setStatus(env, extID, []string{StatusActive}, StatusDeactivated, "applicant.deactivated", "applicantDeactivated")
}

// Activate activates a deactivated applicant. Returns ENOTFOUND and
// ECONFLICT applicant_blocklisted (remove the blocklisting instead).
func (s *Store) Activate(env Env, extID string) (Applicant, error) {
	return s.setStatus(env, extID, []string{StatusDeactivated}, StatusActive, "applicant.activated", "applicantActivated")
}

// Blocklist blocklists an applicant. Returns ENOTFOUND.
func (s *Store) Blocklist(env Env, extID string) (Applicant, error) {
	return s.setStatus(env, extID, []string{StatusActive, StatusDeactivated}, StatusBlocklisted, "applicant.blocklisted", "")
}

// Unblocklist removes the blocklisting: the applicant is again what it
// was before it (active, or deactivated; active for a blocklisting older
// than that record), so no activation happens unseen. Returns ENOTFOUND
// and ECONFLICT applicant_erased.
func (s *Store) Unblocklist(env Env, extID string) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		if a.Status != StatusBlocklisted {
			return nil
		}
		a.Status, a.BlockedFrom = cmp.Or(a.BlockedFrom, StatusActive), ""
		if err := t.save(env, a); err != nil {
			return err
		}
		return t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.blocklist_removed", ActorType: ActorPartner,
			Details: map[string]any{"status": a.Status}})
	})
}

// SetMonitoring turns ongoing monitoring on or off. Returns ENOTFOUND and
// ECONFLICT applicant_erased.
func (s *Store) SetMonitoring(env Env, extID string, on bool) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		if a.Monitoring == on {
			return nil
		}
		a.Monitoring = on
		if err := t.save(env, a); err != nil {
			return err
		}
		h := "applicant.monitoring_disabled"
		if on {
			h = "applicant.monitoring_enabled"
		}
		return t.appendHistory(env, a.ID, HistoryEntry{EventType: h, ActorType: ActorPartner})
	})
}

// AssignLevel moves the applicant to another level and rebuilds its steps.
// Assigning its own level again rebuilds them too when the level's steps
// were edited since (an applicant keeps the steps it was given), and is a
// no-op otherwise. Returns ENOTFOUND (applicant or level), EINVALID
// levelName for a level of the other applicant type, ECONFLICT
// review_in_progress while a review is in flight and review_final after a
// RED FINAL verdict (until reset).
func (s *Store) AssignLevel(env Env, extID, levelName string) (Applicant, error) {
	return s.modify(env, extID, func(t *txn, a *diskApplicant) error {
		l, err := t.getLevel(env, levelName)
		if err != nil {
			return err
		}
		if l.ApplicantType != a.Type {
			return Invalid("levelName", "level %q is for %s applicants, not %s", levelName, l.ApplicantType, a.Type)
		}
		if a.inFlight() {
			return Conflict("review_in_progress", "the level cannot change while a review is in flight")
		}
		if a.Level == l.Name && a.sameSteps(l.Level) {
			return nil
		}
		if a.Review.finalRed() {
			// Rebuilding the steps would undo the verdict: FINAL holds
			// until reset (SPEC §3.3).
			return Conflict("review_final", "applicant %q was rejected with FINAL; reset it before changing its level", extID)
		}
		previous := a.Level
		if err := t.unschedule(a.ReviewJob); err != nil {
			return err
		}
		a.Level, a.Steps, a.ReviewJob, a.InReview, a.RiskLevel = l.Name, newSteps(l.Level, t.now), nil, false, RiskUnknown
		a.dataHeld(l.Level, t.now)
		if err := t.useLevel(env, l); err != nil {
			return err
		}
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
			Details: map[string]any{"verificationLevelName": l.Name, "previousLevelName": previous}}); err != nil {
			return err
		}
		return t.event(env, a, "applicantLevelChanged", map[string]any{"previousLevelName": previous})
	})
}

// Erase erases the applicant's personal data and images; ids and history
// stay. Erasing twice is a no-op. Returns ENOTFOUND.
func (s *Store) Erase(env Env, extID string) error {
	return s.updateIn(env, func(t *txn) error {
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if a.erased() {
			return nil
		}
		if err := t.dropDocuments(env, a, func(Document) bool { return true }); err != nil {
			return err
		}
		if err := t.unschedule(a.ReviewJob); err != nil {
			return err
		}
		a.Fields, a.Locked, a.Answers, a.Asked, a.ReviewJob, a.InReview = map[string]string{}, nil, nil, nil, nil, false
		a.eraseUbos() // UBO hook (store/kyb_ubos.go): rows hold personal data too
		for _, scope := range []string{ubosScope(a.ExternalID), sessionsScope(a.ExternalID)} {
			if err := t.forget(env, scope); err != nil { // remembered answers hold rows and links
				return err
			}
		}
		a.ErasedAt = At(t.now)
		// A review under way is void without its data: steps without a
		// verdict wait for data again rather than show in_review forever.
		for i := range a.Steps {
			if st := &a.Steps[i]; st.ReviewStatus != ReviewCompleted && st.ReviewStatus != ReviewExpired {
				st.set(t.now, ReviewPending, "", "", nil, "")
			}
		}
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendInternal(env, a.ID, "applicant.erased", nil); err != nil {
			return err
		}
		return t.syncChild(env, a) // a company's beneficial owner: its row and the company's verdict
	})
}
