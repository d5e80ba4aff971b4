package store

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
