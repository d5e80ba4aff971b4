package hostedui

import (
	"strings"

	"github.com/complybox/complybox/store"
)

// plainError is the error of a failed form post as the applicant reads it:
// a title that names the field by its label and a sentence in the page's
// language from the message table. The store's own message is written for
// developers (it names fields by their JSON names and states the rule), so
// it is never shown here; the page API answers it unchanged.
func (p *sdkPage) plainError(e *store.Error) *sdkError {
	base, _, _ := strings.Cut(e.Field, "[") // file[1] and roles[0] are labelled as file and roles
	label := p.fieldLabel(base)
	switch {
	case e.Code == store.ELOCKED:
		return &sdkError{Title: p.T("err.title"), Message: p.Tf("err.locked", label)}
	case e.Code == store.ETOOLARGE:
		return &sdkError{Title: p.T("err.title"), Message: p.T("err.too_large")}
	case e.Code == store.ECONFLICT && e.Field != "":
		return &sdkError{Title: p.Tf("err.field", label), Message: p.T("err.required")}
	case e.Code == store.ECONFLICT:
		switch e.Reason {
		case "missing_step_data", "review_in_progress", "review_completed", "too_many_ubos", "nothing_to_review":
			return &sdkError{Title: p.T("error.conflict"), Message: p.T("err." + e.Reason)}
		}
		return &sdkError{Title: p.T("error.conflict"), Message: p.T("err.closed")}
	case e.Field == "body":
		return &sdkError{Title: p.T("err.title"), Message: p.T("err.form")} // the form itself, no field of it
	case e.Field != "":
		return &sdkError{Title: p.Tf("err.field", label), Message: p.T(fieldProblem(base, e.Message))}
	case e.Reason == "not_a_company":
		return &sdkError{Title: p.T("err.title"), Message: p.T("err.not_a_company")}
	}
	return &sdkError{Title: p.T("err.title"), Message: p.T("err.generic")}
}

// fileFields are the multipart names of uploaded files.
var fileFields = []string{"front", "back", "file", "image"}

// fieldProblem returns the message key that says in plain words what is
// wrong with field. For images it reads which rule of package imagecheck
// the store's message states (type, size in pixels, size in bytes, else
// unreadable); each rule's wording is pinned by a test.
func fieldProblem(field, msg string) string {
	switch {
	case field == "file" && strings.Contains(msg, "frames"):
		return "err.frames"
	case isFileField(field):
		switch {
		case strings.Contains(msg, "is required"):
			return "err.file.missing"
		case strings.Contains(msg, "PDF is accepted for documents only"), strings.Contains(msg, "must be a JPEG or PNG image") && !strings.Contains(msg, "PDF"):
			return "err.image.type.photo"
		case strings.Contains(msg, "must be a JPEG or PNG image"):
			return "err.image.type"
		case strings.Contains(msg, "pixels; at least"):
			return "err.image.small"
		case strings.Contains(msg, "at most 10 MiB"):
			return "err.image.large"
		case strings.Contains(msg, "megapixels"), strings.Contains(msg, "MiB are allowed"):
			return "err.image.pixels" // a small file can hold too many pixels: its size is not the reason
		}
		return "err.image.unreadable"
	case strings.Contains(msg, "contains a control character"):
		return "err.control" // a text of any field: say what is wrong, not "please answer"
	case strings.HasPrefix(field, "questionnaire."):
		switch {
		case strings.Contains(msg, "one of"):
			return "err.choice"
		case strings.Contains(msg, "at most"):
			return "err.answer.long"
		}
		return "err.answer"
	case (field == "dateOfBirth" || field == "incorporationDate") && strings.Contains(msg, "in the future"):
		return "err.date.future"
	case field == "dateOfBirth" || field == "incorporationDate":
		return "err.date"
	case field == "ownershipPercent":
		return "err.ownership"
	case field == "roles":
		return "err.roles"
	case field == "email":
		return "err.email"
	case field == "phone":
		return "err.phone"
	case strings.Contains(msg, "at most 500 characters"):
		return "err.long.500"
	case strings.Contains(msg, "at most 200 characters"):
		return "err.long.200"
	case field == "nationality" || field == "country":
		return "err.country"
	case field == "consent":
		return "err.consent"
	case field == "docType" && strings.Contains(msg, "is not issued by"):
		return "err.doctype"
	case field == "docType":
		return "err.doctype.missing" // none chosen, or one not in the list
	}
	return "err.value"
}

// isFileField reports whether field names an uploaded file: front, back,
// file, image, or file.<docType> of the company documents form.
func isFileField(field string) bool {
	for _, f := range fileFields {
		if field == f || strings.HasPrefix(field, f+".") {
			return true
		}
	}
	return false
}

// fieldLabel is the label of a form field in the page's language: a data
// field, a file input (by the step shown) or a question.
func (p *sdkPage) fieldLabel(field string) string {
	if doc, ok := strings.CutPrefix(field, "file."); ok {
		return p.docLabel(doc)
	}
	switch field {
	case "front":
		return p.T("doc.front")
	case "back":
		return p.T("doc.back")
	case "file", "image":
		switch p.Step {
		case store.StepSelfie, store.StepLiveness, store.StepPOA, store.StepCompanyDocs:
			return p.stepLabel(p.Step)
		}
		return p.T("doc.file")
	}
	if id, ok := strings.CutPrefix(field, "questionnaire."); ok {
		for _, q := range p.State.Questionnaire {
			if q.ID == id {
				return q.Text
			}
		}
	}
	if field == "country" && p.Step == store.StepIdentityDoc {
		return p.T("field.country.doc")
	}
	if l := p.T("field." + field); l != "field."+field {
		return l
	}
	if l := p.T("step." + field); l != "step."+field { // a step with no data (missing_step_data)
		return l
	}
	return p.T("err.value")
}

// docLabel is the label of a company document type.
func (p *sdkPage) docLabel(docType string) string {
	if l := p.T("doc." + docType); l != "doc."+docType {
		return l
	}
	return strings.ReplaceAll(docType, "_", " ")
}

// LabelText is the sentence that explains a reject label to the applicant
// in the page's language (the label → sentence table of the messages).
func (p *sdkPage) LabelText(label string) string {
	if t := p.T("label." + label); t != "label."+label {
		return t
	}
	return p.T("label.OTHER")
}

// RejectLabelTexts is the English label → sentence table, the words the
// console shows beside each reject label.
func RejectLabelTexts() map[string]string {
	out := map[string]string{}
	for k, v := range sdkMessages()["en"] {
		if label, ok := strings.CutPrefix(k, "label."); ok {
			out[label] = v
		}
	}
	return out
}

// DocTypeNames are the document types in English words (identity and
// company documents), for the console.
func DocTypeNames() map[string]string {
	out := map[string]string{}
	for k, v := range sdkMessages()["en"] {
		if t, ok := strings.CutPrefix(k, "doc."); ok && (strings.ToUpper(t) == t || strings.Contains(t, "_")) {
			out[t] = v
		}
	}
	return out
}
