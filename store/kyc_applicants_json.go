package store

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
)

// Hand-written JSON encoders for the applicant as stored (diskApplicant)
// and as the API shows it (Applicant), which every applicant write encodes
// inside its commit (putApplicant). Each writes exactly the bytes
// encoding/json writes for the same value (kyc_applicants_json_test holds
// them to it over random applicants); the rare parts whose encoding is
// involved — questionnaire answers, UBO rows, the company structure and a
// review job — go through encoding/json. Under complyperf's applicant phase
// encoding/json's two calls were 9 % of the server's CPU, most of it inside
// the group commit.

func (o *jsonObject) nullStr(k string, v NullString) {
	o.key(k)
	if v == "" {
		o.b = append(o.b, "null"...)
	} else {
		o.b = appendJSONString(o.b, string(v))
	}
}

// member appends the name of a map's member, escaped as needed.
func (o *jsonObject) member(k string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = append(appendJSONString(o.b, k), ':')
}

func (o *jsonObject) boolean(k string, v bool) { o.key(k); o.b = strconv.AppendBool(o.b, v) }
func (o *jsonObject) integer(k string, v int)  { o.key(k); o.b = strconv.AppendInt(o.b, int64(v), 10) }

// list appends items as the array member k, each through elem; nil is
// null, as encoding/json has it.
func list[T any](o *jsonObject, k string, items []T, elem func(b []byte, item T) []byte) {
	o.key(k)
	if items == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i, item := range items {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = elem(o.b, item)
	}
	o.b = append(o.b, ']')
}

func (o *jsonObject) strings(k string, v []string) { list(o, k, v, appendJSONString) }

// marshal appends v through encoding/json.
func (o *jsonObject) marshal(k string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	o.raw(k, b)
	return nil
}

// sortedKeys returns the keys of m in the order encoding/json writes them.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func (o *jsonObject) documents(k string, docs []Document) {
	list(o, k, docs, func(b []byte, d Document) []byte {
		var e jsonObject
		e.start(b)
		e.str("kind", d.Kind)
		e.nullStr("side", d.Side)
		e.nullStr("docType", d.DocType)
		e.nullStr("country", d.Country)
		e.time("uploadedAtUtc", d.UploadedAtUtc)
		e.str("sha256", d.SHA256)
		e.str("contentType", d.ContentType)
		return e.end()
	})
}

func (o *jsonObject) review(k string, r Review) {
	o.key(k)
	var e jsonObject
	e.start(o.b)
	e.str("reviewStatus", r.ReviewStatus)
	e.nullStr("reviewAnswer", r.ReviewAnswer)
	e.nullStr("reviewRejectType", r.ReviewRejectType)
	e.strings("rejectLabels", r.RejectLabels)
	e.nullStr("moderationComment", r.ModerationComment)
	e.time("reviewedAtUtc", r.ReviewedAtUtc)
	o.b = e.end()
}

func (o *jsonObject) steps(k string, steps []Step) {
	list(o, k, steps, func(b []byte, s Step) []byte {
		var e jsonObject
		e.start(b)
		e.str("kind", s.Kind)
		e.boolean("optional", s.Optional)
		e.str("reviewStatus", s.ReviewStatus)
		e.nullStr("reviewAnswer", s.ReviewAnswer)
		e.nullStr("reviewRejectType", s.ReviewRejectType)
		e.strings("rejectLabels", s.RejectLabels)
		e.nullStr("moderationComment", s.ModerationComment)
		e.time("lastUpdatedAtUtc", s.LastUpdatedAtUtc)
		return e.end()
	})
}

// appendJSON appends the stored form of a.
func (a *diskApplicant) appendJSON(b []byte) ([]byte, error) {
	var o jsonObject
	o.start(b)
	o.str("id", a.ID)
	o.str("externalUserId", a.ExternalID)
	o.str("type", a.Type)
	o.str("level", a.Level)
	o.str("status", a.Status)
	if a.BlockedFrom != "" {
		o.str("blockedFrom", a.BlockedFrom)
	}
	o.str("riskLevel", a.RiskLevel)
	if len(a.Fields) > 0 {
		o.key("fields")
		var f jsonObject
		f.start(o.b)
		for _, k := range sortedKeys(a.Fields) {
			f.member(k)
			f.b = appendJSONString(f.b, a.Fields[k])
		}
		o.b = f.end()
	}
	if len(a.Locked) > 0 {
		o.strings("locked", a.Locked)
	}
	if len(a.Documents) > 0 {
		o.documents("documents", a.Documents)
	}
	if len(a.Answers) > 0 {
		if err := o.marshal("answers", a.Answers); err != nil {
			return nil, err
		}
	}
	if len(a.Asked) > 0 {
		if err := o.marshal("asked", a.Asked); err != nil {
			return nil, err
		}
	}
	o.steps("steps", a.Steps)
	o.review("review", a.Review)
	if a.Monitoring {
		o.boolean("monitoring", true)
	}
	o.integer("attempt", a.Attempt)
	if a.InReview {
		o.boolean("inReview", true)
	}
	if len(a.ReviewJob) > 0 {
		o.key("reviewJob")
		o.b = append(o.b, '"')
		o.b = base64.StdEncoding.AppendEncode(o.b, a.ReviewJob)
		o.b = append(o.b, '"')
	}
	o.time("submittedAt", a.SubmittedAt)
	o.time("sessionEnd", a.SessionEnd)
	o.time("createdAt", a.CreatedAt)
	o.time("updatedAt", a.UpdatedAt)
	o.time("erasedAt", a.ErasedAt)
	o.time("consentAt", a.ConsentAt)
	o.key("seq")
	o.b = strconv.AppendUint(o.b, a.Seq, 10)
	if len(a.Ubos) > 0 {
		if err := o.marshal("ubos", a.Ubos); err != nil {
			return nil, err
		}
	}
	if a.Structure != nil {
		if err := o.marshal("structure", a.Structure); err != nil {
			return nil, err
		}
	}
	if a.UboParent != "" {
		o.str("uboParent", a.UboParent)
	}
	if a.UboIndex != 0 {
		o.integer("uboIndex", a.UboIndex)
	}
	if a.ClosedFinal {
		o.boolean("closedFinal", true)
	}
	return o.end(), nil
}

// appendJSON appends v as the API shows it.
func (v *Applicant) appendJSON(b []byte) ([]byte, error) {
	var o jsonObject
	o.start(b)
	o.str("id", v.ID)
	o.str("externalUserId", v.ExternalUserID)
	o.str("type", v.Type)
	o.str("verificationLevelName", v.VerificationLevelName)
	o.str("status", v.Status)
	o.str("riskLevel", v.RiskLevel)
	if len(v.Info) > 0 {
		o.info("info", v.Info)
	}
	if len(v.CompanyInfo) > 0 {
		o.info("companyInfo", v.CompanyInfo)
	}
	o.strings("lockedFields", v.LockedFields)
	o.documents("documents", v.Documents)
	if v.Questionnaire == nil {
		o.raw("questionnaire", []byte("null"))
	} else if err := o.marshal("questionnaire", v.Questionnaire); err != nil {
		return nil, err
	}
	o.review("review", v.Review)
	o.boolean("monitoring", v.Monitoring)
	o.time("createdAtUtc", v.CreatedAtUtc)
	o.time("updatedAtUtc", v.UpdatedAtUtc)
	o.time("consentGivenAtUtc", v.ConsentGivenAtUtc)
	if v.Ubos != nil {
		if err := o.marshal("ubos", v.Ubos); err != nil {
			return nil, err
		}
	}
	return o.end(), nil
}

// info appends a map of field values, a missing one as null.
func (o *jsonObject) info(k string, m map[string]*string) {
	o.key(k)
	var f jsonObject
	f.start(o.b)
	for _, name := range sortedKeys(m) {
		f.member(name)
		f.b = appendJSONStringPtr(f.b, m[name])
	}
	o.b = f.end()
}
