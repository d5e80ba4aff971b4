package store

// Beneficial-owner rows added in the hosted UI (SPEC 3.8): a company's
// session can add rows, which carry source "sdk".

// SDKAddUbo adds a row to the session's company, with source sdk, while
// the company takes data (before submission, or after a RETRY). The row is
// validated as POST …/ubos validates it (fullName and roles required, the
// ubo ownership at most 100). Returns EUNAUTHORIZED, EGONE, EINVALID
// (not_a_company, or naming the field) and ECONFLICT (when the applicant
// takes no data now, too_many_ubos).
func (s *Store) SDKAddUbo(token string, in UboInput) (SDKState, UboAdded, error) {
	var added UboAdded
	st, err := s.sdkCall(token, func(t *txn, x Session, a *diskApplicant, _ Level) error {
		if a.Type != TypeCompany {
			return &Error{Code: EINVALID, Reason: "not_a_company", Field: "externalUserId",
				Message: "applicant " + a.ExternalID + " is an individual; beneficial-owner rows exist only for companies"}
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
		if err := t.appendHistory(x.Env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorSDK,
			Details: map[string]any{"action": "ubo.added", "uboIndex": i, "roles": a.Ubos[i].Roles, "source": SourceSDK}}); err != nil {
			return err
		}
		added = UboAdded{UboIndex: i, Row: a.Ubos[i].view(i)}
		return nil
	})
	return st, added, err
}
