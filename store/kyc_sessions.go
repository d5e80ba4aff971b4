package store

import (
	"crypto/rand"
	"encoding/json"
	"io"
	"strings"
	"time"
)

// Session bounds.
const (
	DefaultSessionTTL = time.Hour
	MinSessionTTL     = time.Minute
	MaxSessionTTL     = 7 * 24 * time.Hour
)

// SessionInput is the body of POST …/verification-sessions.
type SessionInput struct {
	TTLSecs   *int   `json:"ttlSecs"`
	Lang      string `json:"lang"`
	Theme     string `json:"theme"`
	ReturnURL string `json:"returnUrl"`
}

// SessionLink is the answer of POST …/verification-sessions.
type SessionLink struct {
	URL       string `json:"url"`
	ExpiresAt Time   `json:"expiresAt"`
	Token     string `json:"token"`
	ShortCode string `json:"shortCode"`
	ShortURL  string `json:"shortUrl"`
}

// Session is a hosted-UI verification session.
type Session struct {
	Token          string `json:"token"`
	Env            Env    `json:"env"`
	ApplicantID    string `json:"applicantId"`
	ExternalUserID string `json:"externalUserId"`
	Lang           string `json:"lang"`
	Theme          string `json:"theme"`
	ReturnURL      string `json:"returnUrl"`
	ShortCode      string `json:"shortCode"`
	CreatedAt      Time   `json:"createdAt"`
	ExpiresAt      Time   `json:"expiresAt"`
}

// validate applies defaults and checks the input. Returns EINVALID naming
// the field.
func (in *SessionInput) validate() (time.Duration, error) {
	ttl := DefaultSessionTTL
	if in.TTLSecs != nil {
		ttl = time.Duration(*in.TTLSecs) * time.Second
		if ttl < MinSessionTTL || ttl > MaxSessionTTL {
			return 0, Invalid("ttlSecs", "ttlSecs must be from 60 to 604800")
		}
	}
	in.Lang = strings.ToLower(in.Lang)
	if in.Lang == "" {
		in.Lang = "en"
	}
	if !validLang(in.Lang) {
		return 0, Invalid("lang", "lang must be a two-letter language code, e.g. en")
	}
	if in.Theme == "" {
		in.Theme = "light"
	}
	if in.Theme != "light" && in.Theme != "dark" {
		return 0, Invalid("theme", "theme must be light or dark")
	}
	if in.ReturnURL != "" {
		if err := checkReturnURL("returnUrl", in.ReturnURL); err != nil {
			return 0, err
		}
	}
	return ttl, nil
}

// Short codes are 22 characters of base62: 22·log2(62) ≈ 131 random bits,
// above the 128 a bearer credential carries (SPEC §3.4). Codes minted
// before (10 characters of a smaller alphabet) still resolve: ShortLink
// looks a code up as it is.
const (
	shortAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	shortLength   = 22
	// shortAccept is the largest multiple of 62 not above 256: a random
	// byte below it maps to a character without bias; the rest are drawn
	// again (rejection sampling).
	shortAccept = 256 / len(shortAlphabet) * len(shortAlphabet)
)

// randomShortCode returns a fresh short code from crypto/rand.
func randomShortCode() string {
	c, err := shortCodeFrom(nil)
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return c
}

// shortCodeFrom draws a short code from the random bytes of r (crypto/rand
// when nil) by rejection sampling, so every character is equally likely.
// It fails only when r does.
func shortCodeFrom(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	out := make([]byte, 0, shortLength)
	buf := make([]byte, shortLength+8) // one read usually suffices: 8/256 are rejected
	for len(out) < shortLength {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		for _, b := range buf {
			if int(b) < shortAccept && len(out) < shortLength {
				out = append(out, shortAlphabet[int(b)%len(shortAlphabet)])
			}
		}
	}
	return string(out), nil
}

// sessionsScope is the idempotency scope of POST …/verification-sessions
// of the applicant extID.
func sessionsScope(extID string) string {
	return "POST /v1/applicants/" + extID + "/verification-sessions"
}

func (s *Store) sessionLink(x Session) SessionLink {
	base := strings.TrimRight(s.settings.PublicURL, "/")
	return SessionLink{URL: base + "/sdk/" + x.Token, ExpiresAt: x.ExpiresAt, Token: x.Token, ShortCode: x.ShortCode,
		ShortURL: base + "/l/" + x.ShortCode}
}

// CreateSession mints a hosted-UI session and its short link. Returns
// EINVALID naming the field, ENOTFOUND and ECONFLICT for an erased or
// inactive applicant.
func (s *Store) CreateSession(env Env, extID string, in SessionInput, idem Idem) (SessionLink, error) {
	ttl, err := in.validate()
	if err != nil {
		return SessionLink{}, err
	}
	var out SessionLink
	scope := sessionsScope(extID)
	err = s.updateIn(env, func(t *txn) error {
		if ok, err := t.replay(env, scope, idem, &out); ok || err != nil {
			return err
		}
		a, err := t.getApplicant(env, extID)
		if err != nil {
			return err
		}
		if a.erased() {
			return Conflict("applicant_erased", "applicant %q was erased", extID)
		}
		if a.Status != StatusActive {
			return Conflict("applicant_inactive", "applicant %q is %s", extID, a.Status)
		}
		x, err := t.newSession(env, a, in, ttl)
		if err != nil {
			return err
		}
		for i := range a.Steps {
			if st := &a.Steps[i]; st.ReviewStatus == ReviewExpired {
				st.set(t.now, ReviewPending, "", "", nil, "")
			}
		}
		if err := t.save(env, a); err != nil {
			return err
		}
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "enrollment.created", ActorType: ActorPartner,
			Details: map[string]any{"expiresAt": x.ExpiresAt, "lang": x.Lang, "theme": x.Theme}}); err != nil {
			return err
		}
		out = s.sessionLink(x)
		return t.remember(env, scope, idem, out)
	})
	return out, err
}

// newSession stores a session for a (the caller saves a) and schedules its
// expiry. Other issues (UBO links) mint sessions through it too.
func (t *txn) newSession(env Env, a *diskApplicant, in SessionInput, ttl time.Duration) (Session, error) {
	x := Session{Token: randomToken(32), Env: env, ApplicantID: a.ID, ExternalUserID: a.ExternalID, Lang: in.Lang,
		Theme: in.Theme, ReturnURL: in.ReturnURL, CreatedAt: At(t.now), ExpiresAt: At(t.now.Add(ttl))}
	for {
		x.ShortCode = randomShortCode()
		taken := false
		for _, e := range Envs() {
			taken = taken || t.env(e, "shortlinks").Get([]byte(x.ShortCode)) != nil
		}
		if !taken {
			break
		}
	}
	b, err := json.Marshal(x)
	if err != nil {
		return x, err
	}
	if err := t.env(env, "sessions").Put([]byte(x.Token), b); err != nil {
		return x, err
	}
	if err := t.env(env, "shortlinks").Put([]byte(x.ShortCode), []byte(x.Token)); err != nil {
		return x, err
	}
	if x.ExpiresAt.After(a.SessionEnd.Time) {
		a.SessionEnd = x.ExpiresAt
	}
	_, err = t.schedule(x.ExpiresAt.Time, JobExpiry, env, x.Token)
	return x, err
}

func (t *txn) getSession(env Env, token string) (Session, bool, error) {
	var x Session
	b := t.env(env, "sessions").Get([]byte(token))
	if b == nil {
		return x, false, nil
	}
	return x, true, json.Unmarshal(b, &x)
}

// ShortLink resolves a short code to its hosted-UI URL. Returns ENOTFOUND
// for an unknown code and EGONE once the session expired.
func (s *Store) ShortLink(code string) (string, error) {
	var out string
	err := s.view(func(t *txn) error {
		for _, e := range Envs() {
			token := t.env(e, "shortlinks").Get([]byte(code))
			if token == nil {
				continue
			}
			x, ok, err := t.getSession(e, string(token))
			if err != nil || !ok {
				return err
			}
			t.enter(e)
			if !t.now.Before(x.ExpiresAt.Time) {
				return Errorf(EGONE, "link_expired", "this verification link has expired")
			}
			out = s.sessionLink(x).URL
			return nil
		}
		return NotFound("link", code)
	})
	return out, err
}

// expireSession runs when a session's link expires: if the applicant has
// no final verdict, has not submitted since the session began and holds no
// later live session, its pending steps become expired (RED EXPIRED) and
// enrollment.expired is recorded.
func (t *txn) expireSession(j Job) error {
	x, ok, err := t.getSession(j.Env, j.ID)
	if err != nil || !ok {
		return err
	}
	// From now on retention may remove the session (retention.go).
	if err := t.expire(j.Env, expirySession, x.ExpiresAt.Time, []byte(x.Token)); err != nil {
		return err
	}
	a, err := t.getApplicant(j.Env, x.ExternalUserID)
	if err != nil {
		if ErrorCode(err) == ENOTFOUND {
			return nil
		}
		return err
	}
	// A decided applicant (GREEN, or RED FINAL) has nothing left to
	// submit, so nothing expires "before submission" (SPEC §3.3): a
	// session opened after the verdict leaves its steps and history as the
	// verdict left them, optional steps without data included.
	if a.erased() || a.Review.terminal() || !a.SubmittedAt.Before(x.CreatedAt.Time) || a.SessionEnd.After(x.ExpiresAt.Time) {
		return nil
	}
	expired := 0
	for i := range a.Steps {
		if st := &a.Steps[i]; st.ReviewStatus == ReviewPending {
			st.set(t.now, ReviewExpired, Red, RejectExpire, nil, "")
			expired++
		}
	}
	if expired == 0 {
		return nil
	}
	if err := t.save(j.Env, a); err != nil {
		return err
	}
	// The session is named by its expiry, as enrollment.created names it:
	// a short code is a bearer credential (SPEC §3.4), kept out of the
	// history partners and operators read.
	if err := t.appendHistory(j.Env, a.ID, HistoryEntry{EventType: "enrollment.expired", ActorType: ActorSystem,
		Details: map[string]any{"expiresAt": x.ExpiresAt}}); err != nil {
		return err
	}
	return t.syncChild(j.Env, a) // UBO hook (store/kyb_company.go): a child's expired link shows on its row
}
