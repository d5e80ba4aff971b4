package store

import "time"

// Settings are the business settings that come from the configuration file.
// The store applies them; it never reads the file itself.
type Settings struct {
	PublicURL string // base of hosted-UI and short links

	SpawnRateLimitPerHour           int
	RegenerateLinkPerChildCapPer24h int

	KYC   KYCSettings
	Chain ChainSettings

	Retention RetentionSettings

	// Webhook URL policy of PUT /webhooks/outbound.
	AllowHTTP            string // never | loopback | always
	AllowPrivateNetworks bool

	Levels []Level // replace built-in levels of the same name, add others
	Assets []Asset // replace built-in assets of the same symbol, add others
}

// KYCSettings configure the verification side.
type KYCSettings struct {
	CallbackURL            string
	CallbackSecret         string
	DefaultIndividualLevel string
	DefaultCompanyLevel    string
	UBOLevel               string
	ReviewDelay            time.Duration
	SanctionsFile          string // production screening list, one name per line
}

// defaultFor names the configuration key that makes level the default of
// new applicants or spawned children, or "" when none does.
func (k KYCSettings) defaultFor(level string) string {
	switch level {
	case k.DefaultIndividualLevel:
		return "default_individual_level"
	case k.DefaultCompanyLevel:
		return "default_company_level"
	case k.UBOLevel:
		return "ubo_level"
	}
	return ""
}

// ChainSettings configure the sandbox chain simulator.
type ChainSettings struct {
	AutoAdvance bool
	StepDelay   time.Duration
}

func (s Settings) withDefaults() Settings {
	if s.PublicURL == "" {
		s.PublicURL = "http://127.0.0.1:8080"
	}
	if s.SpawnRateLimitPerHour == 0 {
		s.SpawnRateLimitPerHour = 1000
	}
	if s.RegenerateLinkPerChildCapPer24h == 0 {
		s.RegenerateLinkPerChildCapPer24h = 5
	}
	if s.KYC.DefaultIndividualLevel == "" {
		s.KYC.DefaultIndividualLevel = "basic-kyc-level"
	}
	if s.KYC.DefaultCompanyLevel == "" {
		s.KYC.DefaultCompanyLevel = "kyb-level"
	}
	if s.KYC.UBOLevel == "" {
		s.KYC.UBOLevel = "basic-kyc-level"
	}
	if s.Retention.Deliveries == 0 {
		s.Retention.Deliveries = DefaultDeliveryRetention
	}
	if s.AllowHTTP == "" {
		s.AllowHTTP = "loopback"
	}
	return s
}
