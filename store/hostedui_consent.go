package store

// Consent in the hosted UI: before the first step the applicant reads what
// will be asked and accepts a consent line. The moment is kept on the
// applicant (consentGivenAtUtc in GET /v1/applicants/{id}) and recorded as
// the internal history entry consent.given by sdk, in the same transaction:
// the console shows it; partners see the timestamp, since the seed's list
// of partner-visible history events is closed and does not name it.
// Consent is given once per applicant: a later session, a RETRY or a reset
// does not ask again (the processing it covers is the same); erasure keeps
// the timestamp, which is not personal data.

// SDKConsent records that the session's applicant gave consent. A repeat
// changes nothing and records nothing. Returns EUNAUTHORIZED, EGONE and
// ECONFLICT when the applicant takes no data now.
func (s *Store) SDKConsent(token string) (SDKState, error) {
	return s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, _ Level) error {
		if !a.ConsentAt.IsZero() {
			return nil
		}
		if err := a.acceptsData(); err != nil {
			return err
		}
		a.ConsentAt = At(t.now)
		if err := t.save(x.Env, a); err != nil {
			return err
		}
		return t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "consent.given", ActorType: ActorSDK,
			Details: map[string]any{"lang": x.Lang}, Internal: true})
	})
}
