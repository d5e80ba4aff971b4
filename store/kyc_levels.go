package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Step kinds of a level.
const (
	StepIdentityDoc   = "identity_doc"
	StepSelfie        = "selfie"
	StepLiveness      = "liveness"
	StepPOA           = "poa"
	StepQuestionnaire = "questionnaire"
	StepCompanyDocs   = "company_docs"
	StepAML           = "aml"
	StepAdverseMedia  = "adverse_media"
)

// LevelStep is one step of a level.
type LevelStep struct {
	Kind     string `json:"kind" toml:"kind"`
	Optional bool   `json:"optional" toml:"optional"`
}

// Question is one question of a level's questionnaire.
type Question struct {
	ID       string   `json:"id" toml:"id"`
	Text     string   `json:"text" toml:"text"`
	Type     string   `json:"type" toml:"type"` // text | boolean | choice
	Options  []string `json:"options" toml:"options"`
	Required bool     `json:"required" toml:"required"`
}

// Level is a verification level: which steps run and which fields it collects.
type Level struct {
	ID                       string      `json:"id" toml:"-"`
	Name                     string      `json:"name" toml:"name"`
	ApplicantType            string      `json:"applicantType" toml:"applicant_type"` // individual | company
	Steps                    []LevelStep `json:"steps" toml:"steps"`
	PersonalInfoFields       []string    `json:"personalInfoFields" toml:"personal_info_fields"`
	CompanyDataFields        []string    `json:"companyDataFields" toml:"company_data_fields"`
	CompanyRequiredFields    []string    `json:"companyRequiredFields" toml:"company_required_fields"`
	CompanyRequiredDocuments []string    `json:"companyRequiredDocuments" toml:"company_required_documents"`
	Questionnaire            []Question  `json:"questionnaire" toml:"questionnaire"`
	CreatedAtUtc             Time        `json:"createdAtUtc" toml:"-"`
}

// stepKinds lists every step kind, in the order a level shows them.
func stepKinds() []string {
	return []string{StepIdentityDoc, StepSelfie, StepLiveness, StepPOA, StepQuestionnaire, StepCompanyDocs, StepAML, StepAdverseMedia}
}

// screeningStep reports whether kind is a check that runs by itself at
// submission instead of collecting the applicant's data.
func screeningStep(kind string) bool { return kind == StepAML || kind == StepAdverseMedia }

// documentStep reports whether kind collects images.
func documentStep(kind string) bool { return !screeningStep(kind) && kind != StepQuestionnaire }

// builtinLevels returns the three levels of SPEC 3.1.
func builtinLevels() []Level {
	return []Level{
		{
			Name: "basic-kyc-level", ApplicantType: TypeIndividual,
			Steps:              []LevelStep{{Kind: StepIdentityDoc}, {Kind: StepSelfie}},
			PersonalInfoFields: []string{"firstName", "lastName", "middleName", "dateOfBirth", "nationality", "email", "phone"},
		},
		{
			Name: "full-kyc-level", ApplicantType: TypeIndividual,
			Steps: []LevelStep{{Kind: StepIdentityDoc}, {Kind: StepSelfie}, {Kind: StepLiveness}, {Kind: StepPOA},
				{Kind: StepQuestionnaire}, {Kind: StepAML}, {Kind: StepAdverseMedia, Optional: true}},
			PersonalInfoFields: individualFields(),
		},
		{
			Name: "kyb-level", ApplicantType: TypeCompany,
			Steps:                    []LevelStep{{Kind: StepCompanyDocs}, {Kind: StepQuestionnaire}, {Kind: StepAML}},
			CompanyDataFields:        companyFields(),
			CompanyRequiredFields:    []string{"companyName", "registrationNumber", "country"},
			CompanyRequiredDocuments: []string{"certificate_of_incorporation", "register_of_shareholders"},
		},
	}
}

// ConfiguredLevel returns the level named name among the built-in levels
// and configured ([[levels]]), a configured level replacing the built-in
// one of its name; ok is false when neither has it (a level created later
// through the API may still carry the name).
func ConfiguredLevel(configured []Level, name string) (Level, bool) {
	for _, l := range withConfigured(configured) {
		if l.Name == name {
			return l, true
		}
	}
	return Level{}, false
}

// withConfigured returns the built-in levels with the configured ones
// replacing those of the same name and adding the others.
func withConfigured(configured []Level) []Level {
	out := builtinLevels()
	for _, l := range configured {
		replaced := false
		for i := range out {
			if out[i].Name == l.Name {
				out[i], replaced = l, true
			}
		}
		if !replaced {
			out = append(out, l)
		}
	}
	return out
}

// defaultLevels returns the levels in force (withConfigured), a configured
// level that does not validate left out with a warning.
func (s *Store) defaultLevels() []Level {
	out := withConfigured(s.settings.Levels)
	kept := out[:0]
	for _, l := range out {
		l = l.normalized()
		if err := l.validate(); err != nil {
			s.log.Warn("levels: ignoring an invalid configured level", "name", l.Name, "err", err)
			continue
		}
		kept = append(kept, l)
	}
	return kept
}

// normalized returns l with nil slices made empty, so it encodes as [].
func (l Level) normalized() Level {
	if l.ApplicantType == "" {
		l.ApplicantType = TypeIndividual
	}
	l.ID, l.CreatedAtUtc = "", Time{}
	if l.Steps == nil {
		l.Steps = []LevelStep{}
	}
	for _, p := range []*[]string{&l.PersonalInfoFields, &l.CompanyDataFields, &l.CompanyRequiredFields, &l.CompanyRequiredDocuments} {
		if *p == nil {
			*p = []string{}
		}
	}
	if l.Questionnaire == nil {
		l.Questionnaire = []Question{}
	}
	for i := range l.Questionnaire {
		if l.Questionnaire[i].Options == nil {
			l.Questionnaire[i].Options = []string{}
		}
	}
	return l
}

// enabledFields returns the data fields the level collects.
func (l Level) enabledFields() []string {
	if l.ApplicantType == TypeCompany {
		return l.CompanyDataFields
	}
	return l.PersonalInfoFields
}

// step returns the level's step of kind, if any.
func (l Level) step(kind string) (LevelStep, bool) {
	for _, st := range l.Steps {
		if st.Kind == kind {
			return st, true
		}
	}
	return LevelStep{}, false
}

// validate checks a level definition. Returns EINVALID naming the field.
func (l Level) validate() error {
	if !validLevelName(l.Name) {
		return Invalid("name", "name must be 1-100 characters of A-Za-z0-9._-")
	}
	if l.ApplicantType != TypeIndividual && l.ApplicantType != TypeCompany {
		return Invalid("applicantType", "applicantType must be individual or company")
	}
	if len(l.Steps) == 0 {
		return Invalid("steps", "a level needs at least one step")
	}
	if !slices.ContainsFunc(l.Steps, func(st LevelStep) bool { return !st.Optional }) {
		return Invalid("steps", "a level needs at least one required step: the verdict is made by the required steps, so with every step optional none would come")
	}
	seen := map[string]bool{}
	for i, st := range l.Steps {
		f := "steps[" + itoa(i) + "].kind"
		if !inList(stepKinds(), st.Kind) {
			return Invalid(f, "kind must be one of %s", strings.Join(stepKinds(), ", "))
		}
		if seen[st.Kind] {
			return Invalid(f, "step %s appears twice", st.Kind)
		}
		seen[st.Kind] = true
		if l.ApplicantType == TypeCompany && (st.Kind == StepIdentityDoc || st.Kind == StepSelfie || st.Kind == StepLiveness || st.Kind == StepPOA) {
			return Invalid(f, "a company level cannot have the %s step", st.Kind)
		}
		if l.ApplicantType == TypeIndividual && st.Kind == StepCompanyDocs {
			return Invalid(f, "an individual level cannot have the company_docs step")
		}
	}
	if l.ApplicantType == TypeIndividual {
		// Named by the first list that was sent.
		for _, c := range []struct {
			name string
			n    int
		}{{"companyDataFields", len(l.CompanyDataFields)}, {"companyRequiredFields", len(l.CompanyRequiredFields)},
			{"companyRequiredDocuments", len(l.CompanyRequiredDocuments)}} {
			if c.n > 0 {
				return Invalid(c.name, "an individual level collects no company data")
			}
		}
	}
	if err := checkFieldList("personalInfoFields", l.PersonalInfoFields, individualFields()); err != nil {
		return err
	}
	if err := checkFieldList("companyDataFields", l.CompanyDataFields, companyFields()); err != nil {
		return err
	}
	for i, f := range l.CompanyRequiredFields {
		if inList(companyFields(), f) && !inList(l.CompanyDataFields, f) {
			return Invalid("companyRequiredFields["+itoa(i)+"]", "%q is required but not collected: list it in companyDataFields too", f)
		}
	}
	if err := checkFieldList("companyRequiredFields", l.CompanyRequiredFields, l.CompanyDataFields); err != nil {
		return err
	}
	if l.ApplicantType == TypeCompany && len(l.PersonalInfoFields) > 0 {
		return Invalid("personalInfoFields", "a company level collects no personal fields; use companyDataFields")
	}
	for i, d := range l.CompanyRequiredDocuments {
		if !validDocType(d) {
			return Invalid("companyRequiredDocuments["+itoa(i)+"]", "document types are 1-64 characters of a-z0-9_")
		}
	}
	ids := map[string]bool{}
	for i, q := range l.Questionnaire {
		f := "questionnaire[" + itoa(i) + "]"
		switch {
		case q.ID == "" || longerThan(q.ID, 64):
			return Invalid(f+".id", "a question needs an id of 1-64 characters")
		case ids[q.ID]:
			return Invalid(f+".id", "question id %q appears twice", q.ID)
		case strings.TrimSpace(q.Text) == "":
			return Invalid(f+".text", "a question needs a text")
		case q.Type != "text" && q.Type != "boolean" && q.Type != "choice":
			return Invalid(f+".type", "type must be text, boolean or choice")
		case q.Type == "choice" && len(q.Options) == 0:
			return Invalid(f+".options", "a choice question needs options")
		case q.Type != "choice" && len(q.Options) > 0:
			return Invalid(f+".options", "only choice questions have options")
		}
		ids[q.ID] = true
	}
	return checkQuestionTexts(l.Questionnaire)
}

// checkQuestionTexts checks what validate's shape checks of the questions
// leave: an id is one word, ids and texts hold no control character, and
// a choice's options are each a non-blank text given once. A level stored
// before these checks is held to them only when its questions are sent
// again (PatchLevel), so that its other fields stay editable.
func checkQuestionTexts(questions []Question) error {
	for i, q := range questions {
		f := "questionnaire[" + itoa(i) + "]"
		if strings.ContainsFunc(q.ID, unicode.IsSpace) {
			return Invalid(f+".id", "a question id names the answer: no spaces")
		}
		if err := checkControl(f+".id", q.ID, false); err != nil {
			return err
		}
		if err := checkControl(f+".text", q.Text, false); err != nil {
			return err
		}
		if err := checkOptions(f+".options", q.Options); err != nil {
			return err
		}
	}
	return nil
}

// checkOptions checks a choice question's options: each a non-blank text
// (a null in the list reads as ""), given once, since the applicant picks
// one and the answer is compared with them.
func checkOptions(field string, options []string) error {
	seen := make(map[string]bool, len(options))
	for i, o := range options {
		f := field + "[" + itoa(i) + "]"
		if strings.TrimSpace(o) == "" {
			return Invalid(f, "an option must be a non-blank string")
		}
		if seen[o] {
			return Invalid(f, "option %q appears twice", o)
		}
		seen[o] = true
		if err := checkControl(f, o, false); err != nil {
			return err
		}
	}
	return nil
}

func checkFieldList(field string, list, allowed []string) error {
	seen := map[string]bool{}
	for i, f := range list {
		if !inList(allowed, f) || seen[f] {
			return Invalid(field+"["+itoa(i)+"]", "%q is not allowed here (allowed once each: %s)", f, strings.Join(allowed, ", "))
		}
		seen[f] = true
	}
	return nil
}

func validLevelName(s string) bool {
	if len(s) == 0 || len(s) > 100 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// checkCompanyDocType checks the document type of a company document:
// missing, or not 1-64 characters of a-z0-9_. Returns EINVALID naming
// field.
func checkCompanyDocType(field, s string) error {
	if s == "" {
		return Invalid(field, "docType is required for company_docs, e.g. certificate_of_incorporation")
	}
	if !validDocType(s) {
		return Invalid(field, "docType must be 1-64 characters of a-z0-9_, e.g. certificate_of_incorporation")
	}
	return nil
}

func validDocType(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// diskLevel is a level as stored: the record and whether an applicant uses it.
type diskLevel struct {
	Level
	Used bool `json:"used,omitempty"`
}

var settingLevelsSeed = []byte("levels_seed")

// levelsFingerprint identifies the default levels in force, so a changed
// config is applied at the next write.
func (s *Store) levelsFingerprint(defaults []Level) string {
	b, _ := json.Marshal(defaults)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// ensureLevels stores the default levels in env when they are missing or the
// configuration changed since they were stored. Open calls it.
func (t *txn) ensureLevels(env Env) error {
	defaults := t.s.defaultLevels()
	fp := t.s.levelsFingerprint(defaults)
	settings := t.env(env, "settings")
	if string(settings.Get(settingLevelsSeed)) == fp {
		return nil
	}
	for _, l := range defaults {
		d, err := t.getLevel(env, l.Name)
		switch {
		case err == nil:
			l.ID, l.CreatedAtUtc = d.ID, d.CreatedAtUtc
		case ErrorCode(err) == ENOTFOUND:
			l.ID, l.CreatedAtUtc = newID(), At(t.now)
		default:
			return err
		}
		if err := t.putLevel(env, diskLevel{Level: l, Used: d.Used}); err != nil {
			return err
		}
	}
	return settings.Put(settingLevelsSeed, []byte(fp))
}

func (t *txn) getLevel(env Env, name string) (diskLevel, error) {
	var d diskLevel
	b := t.env(env, "levels").Get([]byte(name))
	if b == nil {
		return d, NotFound("level", name)
	}
	return d, json.Unmarshal(b, &d)
}

// sharedLevel is getLevel through the store's cache of decoded levels, for
// CreateApplicant, which reads the level of every new applicant. The level's
// slices are shared with the cache: the caller must not write through them
// (CreateApplicant only reads them, and useLevel writes a copy's Used).
func (t *txn) sharedLevel(env Env, name string) (diskLevel, error) {
	var d diskLevel
	b := t.env(env, "levels").Get([]byte(name))
	if b == nil {
		return d, NotFound("level", name)
	}
	if err := t.s.levels.decode(b, &d); err != nil {
		return diskLevel{}, err
	}
	return d, nil
}

func (t *txn) putLevel(env Env, d diskLevel) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if err := t.env(env, "levels").Put([]byte(d.Name), b); err != nil {
		return err
	}
	return t.env(env, "levels_idx").Put(levelKey(d.Level), []byte(d.Name))
}

// levelKey is a level's key in levels_idx, the order GET /v1/levels lists
// them in (newest first, SPEC §2): its creation time, then its id (uuid
// v7, so levels created in one millisecond keep their order). Neither
// changes when a level is renamed, so the key stays and its name follows.
func levelKey(l Level) []byte {
	return append(itob(uint64(max(l.CreatedAtUtc.UnixMilli(), 0))), l.ID...)
}

// useLevel marks a level as used by an applicant: from now on it cannot be
// renamed.
func (t *txn) useLevel(env Env, d diskLevel) error {
	if d.Used {
		return nil
	}
	d.Used = true
	return t.putLevel(env, d)
}

// Levels lists every level of env, newest first, as GET /v1/levels does
// (the console's list: levels are a handful).
func (s *Store) Levels(env Env) ([]Level, error) {
	var out []Level
	for cursor := ""; ; {
		page, next, err := s.LevelPage(env, Page{Limit: MaxLimit, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if next == nil {
			return out, nil
		}
		cursor = *next
	}
}

// LevelPage lists one page of the levels of env, newest first (SPEC §2),
// through levels_idx: a page reads limit levels whatever their number; the
// cursor is the index key of the previous page's last level. Returns
// EINVALID naming cursor for a cursor this service did not return.
func (s *Store) LevelPage(env Env, p Page) ([]Level, *string, error) {
	var before []byte
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		if err == nil && bytes.HasPrefix(b, []byte(oldLevelCursorPrefix)) {
			return nil, nil, Invalid("cursor", "cursor is from an earlier release of complybox, which listed levels by name; the list is newest first now, so it cannot go on from there: start again from the first page")
		}
		key, ok := bytes.CutPrefix(b, []byte(levelCursorPrefix(env)))
		if !ok && bytes.HasPrefix(b, []byte(levelCursorPrefix(env.Other()))) {
			return nil, nil, Invalid("cursor", "cursor was returned by the list of levels of the other environment: a cursor pages only the list that returned it")
		}
		if !ok { // the form before cursors named their environment, for one upgrade
			key, ok = bytes.CutPrefix(b, []byte(legacyLevelCursorPrefix))
		}
		if err != nil || !ok || len(key) <= 8 {
			return nil, nil, Invalid("cursor", "cursor is not one this service returned")
		}
		before = key
	}
	var out []Level
	var next *string
	err := s.viewIn(env, func(t *txn) error {
		out, next = nil, nil
		levels := t.env(env, "levels")
		c := t.env(env, "levels_idx").Cursor()
		// From the newest, or from the last key before the cursor's.
		k, v := c.Last()
		if before != nil {
			if seek, _ := c.Seek(before); seek == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		for ; k != nil; k, v = c.Prev() {
			if len(out) == p.Limit {
				cur := base64.RawURLEncoding.EncodeToString(append([]byte(levelCursorPrefix(env)), levelKey(out[len(out)-1])...))
				next = &cur
				return nil
			}
			var d diskLevel
			b := levels.Get(v)
			if b == nil {
				return fmt.Errorf("level %q: indexed but missing", v)
			}
			if err := json.Unmarshal(b, &d); err != nil {
				return err
			}
			out = append(out, d.Level)
		}
		return nil
	})
	return out, next, err
}

// levelCursorPrefix marks a level page cursor of env's list, followed by an
// index key; a cursor names its environment so that the other one refuses
// it (SPEC §2 "Lists").
func levelCursorPrefix(env Env) string {
	return "levels." + string(envByte(env)) + ":"
}

// legacyLevelCursorPrefix marks the level cursors of releases from layout 8
// until cursors named their environment (an index key, accepted in either
// environment for one upgrade; drop it in the release after);
// oldLevelCursorPrefix those of releases before layout 8, which named a
// level of a list in name order.
const (
	legacyLevelCursorPrefix = "levels:"
	oldLevelCursorPrefix    = "level:"
)

// Level returns one level. Returns ENOTFOUND (level_not_found).
func (s *Store) Level(env Env, name string) (Level, error) {
	var out Level
	err := s.viewIn(env, func(t *txn) error {
		d, err := t.getLevel(env, name)
		out = d.Level
		return err
	})
	return out, err
}

// CreateLevel stores a new level. Returns EINVALID for a bad definition and
// ECONFLICT (level_exists) when the name is taken.
func (s *Store) CreateLevel(env Env, l Level) (Level, error) {
	l = l.normalized()
	if err := l.validate(); err != nil {
		return Level{}, err
	}
	err := s.updateIn(env, func(t *txn) error {
		if _, err := t.getLevel(env, l.Name); err == nil {
			return Conflict("level_exists", "a level named %q exists already", l.Name)
		}
		l.ID, l.CreatedAtUtc = newID(), At(t.now)
		if err := t.putLevel(env, diskLevel{Level: l}); err != nil {
			return err
		}
		return t.appendInternal(env, "level:"+l.ID, "level.created", map[string]any{"name": l.Name})
	})
	return l, err
}

// LevelPatch is a partial level: nil fields keep their value.
type LevelPatch struct {
	Name                     *string      `json:"name"`
	ApplicantType            *string      `json:"applicantType"`
	Steps                    *[]LevelStep `json:"steps"`
	PersonalInfoFields       *[]string    `json:"personalInfoFields"`
	CompanyDataFields        *[]string    `json:"companyDataFields"`
	CompanyRequiredFields    *[]string    `json:"companyRequiredFields"`
	CompanyRequiredDocuments *[]string    `json:"companyRequiredDocuments"`
	Questionnaire            *[]Question  `json:"questionnaire"`
}

// PatchLevel edits a level; the edit is an internal history event. Returns
// ENOTFOUND, EINVALID, ECONFLICT level_in_use for a rename of a level an
// applicant uses and level_exists when the new name is taken.
func (s *Store) PatchLevel(env Env, name string, p LevelPatch) (Level, error) {
	var out Level
	err := s.updateIn(env, func(t *txn) error {
		d, err := t.getLevel(env, name)
		if err != nil {
			return err
		}
		l := d.Level
		changed := []string{}
		set := func(field string, ok bool, apply func()) {
			if ok {
				apply()
				changed = append(changed, field)
			}
		}
		set("name", p.Name != nil, func() { l.Name = *p.Name })
		set("applicantType", p.ApplicantType != nil, func() { l.ApplicantType = *p.ApplicantType })
		set("steps", p.Steps != nil, func() { l.Steps = *p.Steps })
		set("personalInfoFields", p.PersonalInfoFields != nil, func() { l.PersonalInfoFields = *p.PersonalInfoFields })
		set("companyDataFields", p.CompanyDataFields != nil, func() { l.CompanyDataFields = *p.CompanyDataFields })
		set("companyRequiredFields", p.CompanyRequiredFields != nil, func() { l.CompanyRequiredFields = *p.CompanyRequiredFields })
		set("companyRequiredDocuments", p.CompanyRequiredDocuments != nil, func() { l.CompanyRequiredDocuments = *p.CompanyRequiredDocuments })
		set("questionnaire", p.Questionnaire != nil, func() { l.Questionnaire = *p.Questionnaire })
		id, created := l.ID, l.CreatedAtUtc
		l = l.normalized()
		l.ID, l.CreatedAtUtc = id, created
		check := l
		if p.Questionnaire == nil {
			check.Questionnaire = nil // kept as stored (checkQuestionTexts)
		}
		if err := check.validate(); err != nil {
			return err
		}
		key := t.s.settings.KYC.defaultFor(name)
		if l.ApplicantType != d.ApplicantType && (d.Used || key != "") {
			if key != "" {
				return Conflict("level_in_use", "the applicantType of level %q cannot change: it is the configured kyc.%s", name, key)
			}
			return Conflict("level_in_use", "the applicantType of level %q cannot change: applicants use it", name)
		}
		if l.Name != name {
			if key != "" {
				// New applicants would find no level by that name.
				return Conflict("level_in_use", "level %q cannot be renamed: it is the configured kyc.%s", name, key)
			}
			if d.Used {
				return Conflict("level_in_use", "level %q cannot be renamed: applicants use it", name)
			}
			if _, err := t.getLevel(env, l.Name); err == nil {
				return Conflict("level_exists", "a level named %q exists already", l.Name)
			}
			if err := t.env(env, "levels").Delete([]byte(name)); err != nil {
				return err
			}
		}
		if err := t.putLevel(env, diskLevel{Level: l, Used: d.Used}); err != nil {
			return err
		}
		out = l
		return t.appendInternal(env, "level:"+l.ID, "level.updated", map[string]any{"name": l.Name, "previousName": name, "fields": changed})
	})
	return out, err
}

// Validate checks a level definition, e.g. a [[levels]] entry of the
// configuration at start-up. Returns EINVALID naming the field.
func (l Level) Validate() error { return l.normalized().validate() }
