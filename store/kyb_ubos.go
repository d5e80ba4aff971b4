package store

import (
	"encoding/json"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Beneficial-owner rows of a company applicant (SPEC 3.6, seed 2.9): each
// row can spawn one child individual applicant with its own hosted-UI link.
// Rows live inside the company's applicant record, so a row, its child and
// the company's verdict always change in one transaction.

// Row roles.
func uboRoles() []string { return []string{"ubo", "director", "shareholder", "representative"} }

// Enrollment statuses of a row's child.
const (
	EnrollmentNone      = "none"      // no child yet
	EnrollmentPending   = "pending"   // child spawned, no final verdict
	EnrollmentCompleted = "completed" // child terminal GREEN
	EnrollmentRejected  = "rejected"  // child terminal RED (FINAL)
	EnrollmentFailed    = "failed"    // child soft-rejected (RED RETRY)
	EnrollmentExpired   = "expired"   // the child's link expired before submission
)

// Row sources.
const (
	SourceAPI = "api"
	SourceSDK = "sdk"
)

// MaxUbos bounds the rows of one company.
const MaxUbos = 100

// ownershipScale is the number of fraction digits ownershipPercent keeps.
const ownershipScale = 4

// uboState is what the UBO feature adds to an applicant record: a company's
// rows and negative declarations, a child's link to its row.
type uboState struct {
	Ubos      []uboRow        `json:"ubos,omitempty"`
	Structure *structureFlags `json:"structure,omitempty"`
	UboParent string          `json:"uboParent,omitempty"` // child: the company's externalUserId
	UboIndex  int             `json:"uboIndex,omitempty"`  // child: its row's index
	// ClosedFinal marks a company whose last closing was RED FINAL. A row
	// added later, or a child reopened, puts it back in review until its
	// children are terminal again, but it takes no new data of its own
	// until reset (SPEC 3.3: FINAL holds until reset).
	ClosedFinal bool `json:"closedFinal,omitempty"`
}

// uboRow is one row as stored.
type uboRow struct {
	Number            int      `json:"number"` // creation number, from 1
	FullName          string   `json:"fullName"`
	DateOfBirth       string   `json:"dateOfBirth,omitempty"`
	OwnershipPercent  string   `json:"ownershipPercent"` // canonical decimal
	Roles             []string `json:"roles"`
	Email             string   `json:"email,omitempty"`
	Nationality       string   `json:"nationality,omitempty"`
	Source            string   `json:"source"`
	LinkedApplicantID string   `json:"linkedApplicantId,omitempty"`
	ChildExternalID   string   `json:"childExternalUserId,omitempty"`
	EnrollmentStatus  string   `json:"enrollmentStatus"`
	LinkURL           string   `json:"linkUrl,omitempty"`
	LinkExpiresAt     Time     `json:"linkExpiresAt"`
	SpawnedAt         Time     `json:"spawnedAt"`
	CompletedAt       Time     `json:"completedAt"`
	CreatedAt         Time     `json:"createdAt"`
	UpdatedAt         Time     `json:"updatedAt"`
}

// UboRow is a row as the API shows it (seed 2.9).
type UboRow struct {
	UboIndex                     int         `json:"uboIndex"`
	FullName                     string      `json:"fullName"`
	DateOfBirth                  NullString  `json:"dateOfBirth"`
	OwnershipPercent             json.Number `json:"ownershipPercent"`
	Roles                        []string    `json:"roles"`
	Email                        NullString  `json:"email"`
	Nationality                  NullString  `json:"nationality"`
	Source                       string      `json:"source"`
	LinkedApplicantID            NullString  `json:"linkedApplicantId"`
	ChildExternalUserID          NullString  `json:"childExternalUserId"`
	EnrollmentStatus             string      `json:"enrollmentStatus"`
	VerificationLinkURL          NullString  `json:"verificationLinkUrl"`
	VerificationLinkExpiresAtUtc Time        `json:"verificationLinkExpiresAtUtc"`
	SpawnedAtUtc                 Time        `json:"spawnedAtUtc"`
	CompletedAtUtc               Time        `json:"completedAtUtc"`
	CreatedAtUtc                 Time        `json:"createdAtUtc"`
	UpdatedAtUtc                 Time        `json:"updatedAtUtc"`
}

func (r *uboRow) view(index int) UboRow {
	return UboRow{
		UboIndex: index, FullName: r.FullName, DateOfBirth: NullString(r.DateOfBirth),
		OwnershipPercent: json.Number(r.OwnershipPercent), Roles: append([]string{}, r.Roles...),
		Email: NullString(r.Email), Nationality: NullString(r.Nationality), Source: r.Source,
		LinkedApplicantID: NullString(r.LinkedApplicantID), ChildExternalUserID: NullString(r.ChildExternalID),
		EnrollmentStatus: r.EnrollmentStatus, VerificationLinkURL: NullString(r.LinkURL),
		VerificationLinkExpiresAtUtc: r.LinkExpiresAt, SpawnedAtUtc: r.SpawnedAt, CompletedAtUtc: r.CompletedAt,
		CreatedAtUtc: r.CreatedAt, UpdatedAtUtc: r.UpdatedAt,
	}
}

// uboView returns the rows for the applicant view: every row of a company
// (an empty list when it has none), nil for an individual.
func (a *diskApplicant) uboView() *[]UboRow {
	if a.Type != TypeCompany {
		return nil
	}
	out := make([]UboRow, len(a.Ubos))
	for i := range a.Ubos {
		out[i] = a.Ubos[i].view(i)
	}
	return &out
}

func (r *uboRow) has(role string) bool { return inList(r.Roles, role) }

func (r *uboRow) spawned() bool { return r.LinkedApplicantID != "" }

// UboInput is a row body: POST …/ubos, an element of ubos[] on create, or
// the partial body of PATCH …/ubos/{uboIndex}. Kept raw so that presence,
// null and the JSON type of each field are known.
type UboInput map[string]json.RawMessage

// JSONMembers names the members of a row's input (wire.Members), so that
// one given twice or named in another case is refused as a struct's field
// would be; the row's other members (linkedApplicantId, source…) are
// ignored.
func (UboInput) JSONMembers() map[string]reflect.Type { return uboMembers }

// uboMembers is UboInput's JSONMembers, a table only read.
var uboMembers = map[string]reflect.Type{"fullName": nil, "dateOfBirth": nil, "ownershipPercent": nil,
	"roles": nil, "email": nil, "nationality": nil}

// applyUboInput validates the row fields present in in and writes them to
// r. create requires fullName and roles. Link fields (linkedApplicantId,
// source, verificationLink…) and unknown fields are ignored. prefix names
// the field in errors ("ubos[1]." on create). It reports whether fullName or
// dateOfBirth changed.
func applyUboInput(r *uboRow, in UboInput, prefix string, create bool, now time.Time) (bool, error) {
	identity := false
	if raw, ok := in["fullName"]; ok || create {
		v, ok, err := jsonString(prefix+"fullName", raw)
		if err != nil {
			return false, err
		}
		v = strings.TrimSpace(v)
		if !ok || v == "" {
			return false, Invalid(prefix+"fullName", "fullName is required: 1 to 200 characters")
		}
		if longerThan(v, 200) {
			return false, Invalid(prefix+"fullName", "fullName must be at most 200 characters")
		}
		if err := checkControl("fullName", v, false); err != nil {
			return false, Within(prefix, err)
		}
		identity = identity || v != r.FullName
		r.FullName = v
	}
	if raw, ok := in["dateOfBirth"]; ok {
		v, ok, err := jsonString(prefix+"dateOfBirth", raw)
		if err != nil {
			return false, err
		}
		if ok {
			if v, err = normalizeField("dateOfBirth", v, now); err != nil {
				return false, Within(prefix, err)
			}
		}
		identity = identity || v != r.DateOfBirth
		r.DateOfBirth = v
	}
	if raw, ok := in["ownershipPercent"]; ok {
		v, err := parseOwnership(prefix+"ownershipPercent", raw)
		if err != nil {
			return false, err
		}
		r.OwnershipPercent = v
	}
	if r.OwnershipPercent == "" {
		r.OwnershipPercent = "0"
	}
	if raw, ok := in["roles"]; ok || create {
		roles, err := parseRoles(prefix+"roles", raw)
		if err != nil {
			return false, err
		}
		r.Roles = roles
	}
	for _, f := range []string{"email", "nationality"} {
		raw, ok := in[f]
		if !ok {
			continue
		}
		v, ok, err := jsonString(prefix+f, raw)
		if err != nil {
			return false, err
		}
		if ok {
			if v, err = normalizeField(f, v, now); err != nil {
				return false, Within(prefix, err)
			}
		}
		if f == "email" {
			r.Email = v
		} else {
			r.Nationality = v
		}
	}
	return identity, nil
}

// parseOwnership reads a JSON number from 0 to 100 with at most four
// fraction digits and returns it as a canonical decimal ("25", "33.3333").
func parseOwnership(field string, raw json.RawMessage) (string, error) {
	bad := Invalid(field, "%s must be a number from 0 to 100 with at most %d fraction digits", field, ownershipScale)
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" || s[0] == '"' || s[0] == '[' || s[0] == '{' || s == "true" || s == "false" || len(s) > 40 {
		return "", bad
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(100, 1)) > 0 {
		return "", bad
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(ownershipScale), nil)))
	if !scaled.IsInt() {
		return "", bad
	}
	out := r.FloatString(ownershipScale)
	out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	return out, nil
}

func parseRoles(field string, raw json.RawMessage) ([]string, error) {
	var roles []json.RawMessage
	if isNull(raw) || json.Unmarshal(raw, &roles) != nil || len(roles) == 0 {
		return nil, Invalid(field, "roles must be a non-empty array of %s", strings.Join(uboRoles(), ", "))
	}
	out := make([]string, 0, len(roles))
	for i, r := range roles {
		// An element of another type is named by its index too.
		var role string
		if json.Unmarshal(r, &role) != nil || !inList(uboRoles(), role) {
			return nil, Invalid(field+"["+itoa(i)+"]", "role must be one of %s", strings.Join(uboRoles(), ", "))
		}
		if !inList(out, role) {
			out = append(out, role)
		}
	}
	return out, nil
}

// checkOwnership returns EINVALID naming field when the ownership of the
// rows with role ubo adds up to more than 100.
func checkOwnership(rows []uboRow, field string) error {
	sum := new(big.Rat)
	for i := range rows {
		if !rows[i].has("ubo") {
			continue
		}
		v, ok := new(big.Rat).SetString(rows[i].OwnershipPercent)
		if ok {
			sum.Add(sum, v)
		}
	}
	if sum.Cmp(big.NewRat(100, 1)) > 0 {
		return Invalid(field, "the ownershipPercent of the rows with role ubo adds up to %s, over 100",
			strings.TrimRight(strings.TrimRight(sum.FloatString(ownershipScale), "0"), "."))
	}
	return nil
}

// addUbosOnCreate adds the rows of ubos[] in a create body to a new
// company applicant; an individual ignores them, as it ignores every field
// its level does not collect. Returns EINVALID naming ubos[i].field.
func (a *diskApplicant) addUbosOnCreate(raw json.RawMessage, now time.Time) error {
	if a.Type != TypeCompany || isNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return Invalid("ubos", "ubos must be an array of rows")
	}
	if len(items) > MaxUbos {
		return Invalid("ubos", "a company has at most %d rows", MaxUbos)
	}
	for i, item := range items {
		prefix := "ubos[" + itoa(i) + "]."
		var in UboInput
		if json.Unmarshal(item, &in) != nil || in == nil {
			return Invalid("ubos["+itoa(i)+"]", "each row must be a JSON object")
		}
		if _, err := a.appendUbo(in, prefix, SourceAPI, now); err != nil {
			return err
		}
	}
	return nil
}

// appendUbo validates a row and appends it. Returns its index.
func (a *diskApplicant) appendUbo(in UboInput, prefix, source string, now time.Time) (int, error) {
	if len(a.Ubos) >= MaxUbos {
		return 0, Conflict("too_many_ubos", "a company has at most %d rows", MaxUbos)
	}
	r := uboRow{Number: len(a.Ubos) + 1, Source: source, EnrollmentStatus: EnrollmentNone, CreatedAt: At(now), UpdatedAt: At(now)}
	if _, err := applyUboInput(&r, in, prefix, true, now); err != nil {
		return 0, err
	}
	rows := append(append([]uboRow{}, a.Ubos...), r)
	if err := checkOwnership(rows, prefix+"ownershipPercent"); err != nil {
		return 0, err
	}
	a.Ubos = rows
	return len(rows) - 1, nil
}

// repeatedUbo returns the index of a row that says what in says: the same
// name, date of birth, ownership, roles (in any order), email and
// nationality. The hosted UI takes such a row as one it already has (a
// form sent twice by a double click or the back button) rather than a
// second owner whose verification the company would wait for.
func (a *diskApplicant) repeatedUbo(in UboInput, now time.Time) (int, bool, error) {
	var r uboRow
	if _, err := applyUboInput(&r, in, "", true, now); err != nil {
		return 0, false, err
	}
	for i := range a.Ubos {
		if a.Ubos[i].says(&r) {
			return i, true, nil
		}
	}
	return 0, false, nil
}

// says reports whether row r and o describe the same person in the same
// roles.
func (r *uboRow) says(o *uboRow) bool {
	if r.FullName != o.FullName || r.DateOfBirth != o.DateOfBirth || r.OwnershipPercent != o.OwnershipPercent ||
		r.Email != o.Email || r.Nationality != o.Nationality || len(r.Roles) != len(o.Roles) {
		return false
	}
	for _, role := range o.Roles {
		if !r.has(role) {
			return false
		}
	}
	return true
}

// eraseUbos drops the personal data of every row; links and statuses stay.
func (a *diskApplicant) eraseUbos() {
	for i := range a.Ubos {
		r := &a.Ubos[i]
		r.FullName, r.DateOfBirth, r.Email, r.Nationality = "", "", "", ""
	}
}

// parentExternalID is the company a child applicant belongs to, or "".
func (a *diskApplicant) parentExternalID() string { return a.UboParent }

// company loads a company applicant for a row call. Returns ENOTFOUND and
// EINVALID not_a_company.
func (t *txn) company(env Env, extID string) (*diskApplicant, error) {
	a, err := t.getApplicant(env, extID)
	if err != nil {
		return nil, err
	}
	if a.Type != TypeCompany {
		return nil, &Error{Code: EINVALID, Reason: "not_a_company", Field: "externalUserId",
			Message: "applicant " + a.ExternalID + " is an individual; beneficial-owner rows exist only for companies"}
	}
	return a, nil
}

// row returns the row at index, a zero-based decimal. Anything else, or an
// index past the last row, is ENOTFOUND ubo_not_found.
func (a *diskApplicant) row(index string) (int, *uboRow, error) {
	notFound := NotFound("ubo", index)
	notFound.Message = "applicant " + a.ExternalID + " has no row at uboIndex " + strconv.Quote(index)
	if index == "" || len(index) > 6 || strings.Trim(index, "0123456789") != "" {
		return 0, nil, notFound
	}
	n, err := strconv.Atoi(index)
	if err != nil || n >= len(a.Ubos) {
		return 0, nil, notFound
	}
	return n, &a.Ubos[n], nil
}

// UboAdded is the answer of POST …/ubos.
type UboAdded struct {
	UboIndex int    `json:"uboIndex"`
	Row      UboRow `json:"row"`
}

// AddUbo appends a row to a company (source api or sdk). Returns ENOTFOUND,
// EINVALID (not_a_company, or naming the field; the ubo ownership over 100)
// and ECONFLICT (applicant_erased, too_many_ubos).
func (s *Store) AddUbo(env Env, extID string, in UboInput, source string, idem Idem) (UboAdded, error) {
	if source != SourceSDK {
		source = SourceAPI
	}
	var out UboAdded
	scope := ubosScope(extID)
	err := s.updateIn(env, func(t *txn) error {
		if ok, err := t.replay(env, scope, idem, &out); ok || err != nil {
			return err
		}
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		if err := a.acceptsEdits(); err != nil {
			return err
		}
		i, err := a.appendUbo(in, "", source, t.now)
		if err != nil {
			return err
		}
		actor := ActorPartner
		if source == SourceSDK {
			actor = ActorSDK
		}
		// The row first, then what it does to the verdict (review.reopened).
		if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: actor,
			Details: map[string]any{"action": "ubo.added", "uboIndex": i, "roles": a.Ubos[i].Roles, "source": source}}); err != nil {
			return err
		}
		if err := t.saveCompany(env, a); err != nil {
			return err
		}
		out = UboAdded{UboIndex: i, Row: a.Ubos[i].view(i)}
		return t.remember(env, scope, idem, out)
	})
	return out, err
}

// ubosScope is the idempotency scope of POST …/ubos of the applicant extID.
func ubosScope(extID string) string { return "POST /v1/applicants/" + extID + "/ubos" }

// Ubos lists a company's rows in uboIndex order (the order of ubos[] in the
// applicant), a page at a time; the cursor is opaque. Returns ENOTFOUND and
// EINVALID (not_a_company, cursor).
func (s *Store) Ubos(env Env, extID string, p Page) ([]UboRow, *string, error) {
	from := uint64(0)
	if p.Cursor != "" {
		var err error
		if from, err = decodeCursor(cursorKind{listUbos, env}, p.Cursor); err != nil {
			return nil, nil, err
		}
	}
	limit := p.Limit
	if limit == 0 {
		limit = DefaultLimit
	}
	out := []UboRow{}
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		for i := int(min(from, uint64(len(a.Ubos)))); i < len(a.Ubos); i++ {
			if len(out) == limit {
				c := encodeCursor(cursorKind{listUbos, env}, uint64(i))
				next = &c
				break
			}
			out = append(out, a.Ubos[i].view(i))
		}
		return nil
	})
	return out, next, err
}

// UboPatched is the answer of PATCH …/ubos/{uboIndex}: the row, and whether
// this change edited fullName or dateOfBirth of a row whose child exists
// (the child keeps the identity it was spawned with).
type UboPatched struct {
	UboRow
	IdentityChangedAfterSpawn bool `json:"identityChangedAfterSpawn"`
}

// PatchUbo changes a row: fullName, dateOfBirth, ownershipPercent, roles,
// email, nationality (null clears the optional ones). Link fields are
// ignored. Returns ENOTFOUND (applicant, ubo_not_found), EINVALID
// (not_a_company, or naming the field) and ECONFLICT applicant_erased.
func (s *Store) PatchUbo(env Env, extID, index string, in UboInput) (UboPatched, error) {
	var out UboPatched
	err := s.updateIn(env, func(t *txn) error {
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		i, r, err := a.row(index)
		if err != nil {
			return err
		}
		if err := a.acceptsEdits(); err != nil {
			return err
		}
		before, err := json.Marshal(r)
		if err != nil {
			return err
		}
		identity, err := applyUboInput(r, in, "", false, t.now)
		if err != nil {
			return err
		}
		field := "ownershipPercent"
		if _, ok := in["ownershipPercent"]; !ok {
			field = "roles"
		}
		if err := checkOwnership(a.Ubos, field); err != nil {
			return err
		}
		out = UboPatched{IdentityChangedAfterSpawn: identity && r.spawned()}
		after, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if string(after) != string(before) {
			r.UpdatedAt = At(t.now)
			if err := t.saveCompany(env, a); err != nil {
				return err
			}
			if err := t.appendHistory(env, a.ID, HistoryEntry{EventType: "applicant.updated", ActorType: ActorPartner,
				Details: map[string]any{"action": "ubo.updated", "uboIndex": i,
					"identityChangedAfterSpawn": out.IdentityChangedAfterSpawn}}); err != nil {
				return err
			}
		}
		out.UboRow = r.view(i)
		return nil
	})
	return out, err
}

// Ubo returns one row. Returns ENOTFOUND (applicant, ubo_not_found) and
// EINVALID not_a_company.
func (s *Store) Ubo(env Env, extID, index string) (UboRow, error) {
	var out UboRow
	err := s.viewIn(env, func(t *txn) error {
		a, err := t.company(env, extID)
		if err != nil {
			return err
		}
		i, r, err := a.row(index)
		if err != nil {
			return err
		}
		out = r.view(i)
		return nil
	})
	return out, err
}
