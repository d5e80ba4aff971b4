package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/server/hostedui"
	"github.com/complybox/complybox/store"
	"github.com/complybox/complybox/store/imagequality"
	"github.com/complybox/complybox/store/urlpolicy"
)

// envPrefix starts every environment variable that overrides a config key.
const envPrefix = "COMPLYBOX_"

// Config is complybox's configuration: built-in defaults, then the TOML file,
// then COMPLYBOX_* environment variables, then command-line flags.
type Config struct {
	Listen      string             `toml:"listen"`
	PublicURL   string             `toml:"public_url"` // empty: derived from the bound listen address
	DB          string             `toml:"db"`
	Credentials []CredentialConfig `toml:"credentials"`
	PartnerAPI  PartnerAPIConfig   `toml:"partner_api"`
	KYC         KYCConfig          `toml:"kyc"`
	Dispatch    DispatchConfig     `toml:"dispatch"`
	Chain       ChainConfig        `toml:"chain"`
	Retention   RetentionConfig    `toml:"retention"`
	Metrics     MetricsConfig      `toml:"metrics"`
	Log         LogConfig          `toml:"log"`
	Branding    BrandingConfig     `toml:"branding"`
	Quality     QualityConfig      `toml:"image_quality"`
	Levels      []store.Level      `toml:"levels"`
	Assets      []store.Asset      `toml:"assets"`
}

// BrandingConfig is the partner's look of the hosted verification pages.
type BrandingConfig struct {
	Name         string `toml:"name"`          // shown in the header and the consent line
	Logo         string `toml:"logo"`          // a PNG, JPEG, SVG or WebP file, served at /sdk-assets/brand-logo
	AccentColor  string `toml:"accent_color"`  // #rrggbb
	SupportEmail string `toml:"support_email"` // shown in the footer
}

// brandingLogoMax is the largest logo file accepted.
const brandingLogoMax = 256 << 10

var accentColor = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

// validate checks the branding, naming the key.
func (b BrandingConfig) validate() error {
	if len(b.Name) > 80 {
		return configError("branding.name", "at most 80 bytes")
	}
	if b.AccentColor != "" && !accentColor.MatchString(b.AccentColor) {
		return configError("branding.accent_color", "%q is not a colour written #rrggbb", b.AccentColor)
	}
	if b.SupportEmail != "" {
		if a, err := mail.ParseAddress(b.SupportEmail); err != nil || a.Address != b.SupportEmail {
			return configError("branding.support_email", "%q is not an email address", b.SupportEmail)
		}
	}
	if b.Logo != "" {
		if _, _, err := b.logo(); err != nil {
			return err
		}
	}
	return nil
}

// logo reads the logo file and names its content type by its bytes.
func (b BrandingConfig) logo() ([]byte, string, error) {
	fi, err := os.Stat(b.Logo)
	if err != nil {
		return nil, "", configError("branding.logo", "%v", err)
	}
	if fi.Size() > brandingLogoMax {
		return nil, "", configError("branding.logo", "%s is %d bytes; at most %d", b.Logo, fi.Size(), brandingLogoMax)
	}
	data, err := os.ReadFile(b.Logo)
	if err != nil {
		return nil, "", configError("branding.logo", "%v", err)
	}
	ct := http.DetectContentType(data)
	if strings.HasSuffix(strings.ToLower(b.Logo), ".svg") && bytes.Contains(data, []byte("<svg")) {
		ct = "image/svg+xml"
	}
	switch ct {
	case "image/png", "image/jpeg", "image/webp", "image/gif", "image/svg+xml":
	default:
		return nil, "", configError("branding.logo", "%s is %s, not a PNG, JPEG, WebP, GIF or SVG image", b.Logo, ct)
	}
	return data, ct, nil
}

// hostedBranding is the branding the hosted pages show.
func (c *Config) hostedBranding() (hostedui.Branding, error) {
	b := hostedui.Branding{Name: c.Branding.Name, Accent: strings.ToLower(c.Branding.AccentColor), SupportEmail: c.Branding.SupportEmail}
	if c.Branding.Logo != "" {
		var err error
		if b.Logo, b.LogoType, err = c.Branding.logo(); err != nil {
			return b, err
		}
	}
	return b, nil
}

// QualityConfig holds the thresholds of the image quality checks the
// hosted UI runs on every uploaded photo (package imagequality): a photo
// that fails one is accepted, and the applicant is told in words and may
// retake it before going on. Luma is 0..255.
type QualityConfig struct {
	Enabled      bool `toml:"enabled"`
	MinLongSide  int  `toml:"min_long_side"`  // pixels
	MinShortSide int  `toml:"min_short_side"` // pixels
	DarkMean     int  `toml:"dark_mean"`      // mean luma under it: too dark
	BrightMean   int  `toml:"bright_mean"`    // mean luma over it: overexposed
	GlareLevel   int  `toml:"glare_level"`    // a pixel at or over this luma is glare
	GlarePercent int  `toml:"glare_percent"`  // more glare pixels than this percentage: glare
	BlurVariance int  `toml:"blur_variance"`  // variance of the Laplacian under it: blurry
}

func qualityConfig(th imagequality.Thresholds) QualityConfig {
	return QualityConfig{Enabled: true, MinLongSide: th.MinLongSide, MinShortSide: th.MinShortSide, DarkMean: int(th.DarkMean),
		BrightMean: int(th.BrightMean), GlareLevel: int(th.GlareLevel), GlarePercent: int(th.GlareShare*100 + 0.5), BlurVariance: int(th.BlurVariance)}
}

// validate checks the thresholds, naming the key.
func (q QualityConfig) validate() error {
	for _, f := range []struct {
		key    string
		v, max int
	}{{"min_long_side", q.MinLongSide, 20000}, {"min_short_side", q.MinShortSide, 20000}, {"dark_mean", q.DarkMean, 255},
		{"bright_mean", q.BrightMean, 255}, {"glare_level", q.GlareLevel, 255}, {"glare_percent", q.GlarePercent, 100}, {"blur_variance", q.BlurVariance, 100000}} {
		if f.v < 0 || f.v > f.max {
			return configError("image_quality."+f.key, "%d is out of 0..%d", f.v, f.max)
		}
	}
	if q.BrightMean != 0 && q.DarkMean >= q.BrightMean {
		return configError("image_quality.dark_mean", "%d must be under bright_mean (%d)", q.DarkMean, q.BrightMean)
	}
	if q.MinShortSide > q.MinLongSide {
		return configError("image_quality.min_short_side", "%d is more than min_long_side (%d)", q.MinShortSide, q.MinLongSide)
	}
	return nil
}

// thresholds are the checks the hosted UI runs; the zero Thresholds (no
// check) when disabled.
func (q QualityConfig) thresholds() imagequality.Thresholds {
	if !q.Enabled {
		return imagequality.Thresholds{}
	}
	return imagequality.Thresholds{MinLongSide: q.MinLongSide, MinShortSide: q.MinShortSide, DarkMean: float64(q.DarkMean),
		BrightMean: float64(q.BrightMean), GlareLevel: float64(q.GlareLevel), GlareShare: float64(q.GlarePercent) / 100, BlurVariance: float64(q.BlurVariance)}
}

// CredentialConfig is an API credential named in the configuration.
type CredentialConfig struct {
	Key         string `toml:"key"`
	Secret      string `toml:"secret"`
	Environment string `toml:"environment"` // sandbox (default) | production
	Role        string `toml:"role"`        // partner (default) | admin
	Name        string `toml:"name"`
}

// PartnerAPIConfig holds the partner API limits (seed: PartnerApi:*).
type PartnerAPIConfig struct {
	SpawnRateLimitPerHour           int `toml:"spawn_rate_limit_per_hour"`
	RegenerateLinkPerChildCapPer24h int `toml:"regenerate_link_per_child_cap_per_24h"`
}

// KYCConfig configures the verification side.
type KYCConfig struct {
	CallbackURL            string   `toml:"callback_url"`
	CallbackSecret         string   `toml:"callback_secret"`
	DefaultIndividualLevel string   `toml:"default_individual_level"`
	DefaultCompanyLevel    string   `toml:"default_company_level"`
	UBOLevel               string   `toml:"ubo_level"`
	ReviewDelay            Duration `toml:"review_delay"`
	SanctionsFile          string   `toml:"sanctions_file"`
}

// DispatchConfig configures the webhook dispatcher.
type DispatchConfig struct {
	PollInterval         Duration   `toml:"poll_interval"`
	AttemptTimeout       Duration   `toml:"attempt_timeout"`
	RetryDelays          []Duration `toml:"retry_delays"`
	MaxAttempts          int        `toml:"max_attempts"`
	Concurrency          int        `toml:"concurrency"`
	AllowHTTP            string     `toml:"allow_http"` // never | loopback | always
	AllowPrivateNetworks bool       `toml:"allow_private_networks"`
}

// ChainConfig configures the sandbox chain simulator.
type ChainConfig struct {
	AutoAdvance bool     `toml:"auto_advance"`
	StepDelay   Duration `toml:"step_delay"`
}

// RetentionConfig configures what the background loop removes (SPEC §1).
type RetentionConfig struct {
	Deliveries Duration `toml:"deliveries"` // delivered/dead deliveries, their attempts, events left with no delivery
}

// MetricsConfig configures GET /metrics (Prometheus text format, on the
// API's listener, unauthenticated).
type MetricsConfig struct {
	Enabled bool `toml:"enabled"`
}

// LogConfig configures the log written to stderr.
type LogConfig struct {
	Level  string `toml:"level"`  // debug | info | warn | error
	Format string `toml:"format"` // text | json
}

// Duration is a time.Duration written as a Go duration string ("5s", "15m").
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a duration (write e.g. \"5s\", \"250ms\", \"15m\")", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes d as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// String returns d as a Go duration string.
func (d Duration) String() string { return time.Duration(d).String() }

// DefaultConfig returns the built-in configuration of SPEC §1.
func DefaultConfig() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		DB:     "complybox.db",
		PartnerAPI: PartnerAPIConfig{
			SpawnRateLimitPerHour:           1000,
			RegenerateLinkPerChildCapPer24h: 5,
		},
		KYC: KYCConfig{
			DefaultIndividualLevel: "basic-kyc-level",
			DefaultCompanyLevel:    "kyb-level",
			UBOLevel:               "basic-kyc-level",
			ReviewDelay:            Duration(2 * time.Second),
		},
		Dispatch: DispatchConfig{
			PollInterval:   Duration(5 * time.Second),
			AttemptTimeout: Duration(5 * time.Second),
			RetryDelays: []Duration{
				Duration(10 * time.Second), Duration(30 * time.Second), Duration(time.Minute),
				Duration(5 * time.Minute), Duration(15 * time.Minute),
			},
			MaxAttempts: 5,
			Concurrency: 16,
			AllowHTTP:   "loopback",
		},
		Chain:     ChainConfig{AutoAdvance: true, StepDelay: Duration(3 * time.Second)},
		Retention: RetentionConfig{Deliveries: Duration(store.DefaultDeliveryRetention)},
		Metrics:   MetricsConfig{Enabled: true},
		Log:       LogConfig{Level: "info", Format: "text"},
		Quality:   qualityConfig(imagequality.DefaultThresholds()),
	}
}

// configFlags are the command-line values that override the configuration;
// empty means not given.
type configFlags struct {
	path   string
	db     string
	listen string
}

// loadConfig builds the configuration: defaults, the file at flags.path (when
// given), the environment (environ, KEY=VALUE pairs) and the flags, then
// validates it. It returns warnings to log once a logger exists: the
// COMPLYBOX_ variables that name no key, the [kyc] level keys that name no
// known level.
func loadConfig(flags configFlags, environ []string) (Config, []string, error) {
	cfg := DefaultConfig()
	if flags.path != "" {
		if err := cfg.parseFile(flags.path); err != nil {
			return cfg, nil, err
		}
	}
	warnings, err := cfg.applyEnv(environ)
	if err != nil {
		return cfg, warnings, err
	}
	if flags.db != "" {
		cfg.DB = flags.db
	}
	if flags.listen != "" {
		cfg.Listen = flags.listen
	}
	if err := cfg.Validate(); err != nil {
		return cfg, warnings, err
	}
	return cfg, append(warnings, cfg.unknownLevels()...), nil
}

// parseFile decodes the TOML file at path over c. Unknown keys are refused,
// naming the key.
func (c *Config) parseFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return c.parse(path, string(b))
}

func (c *Config) parse(name, text string) error {
	md, err := toml.Decode(text, c)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) && pe.LastKey != "" {
			return fmt.Errorf("config %s: line %d: key %s: %s", name, pe.Position.Line, pe.LastKey, pe.Message)
		}
		if errors.As(err, &pe) {
			return fmt.Errorf("config %s: line %d: %s", name, pe.Position.Line, pe.Message)
		}
		return fmt.Errorf("config %s: %w", name, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		return fmt.Errorf("config %s: unknown key %q", name, undecoded[0].String())
	}
	// toml matches keys to fields case-insensitively and Undecoded does not
	// report such matches; TOML keys are case-sensitive, so LISTEN is not
	// listen.
	for _, k := range md.Keys() {
		if !declares(reflect.TypeFor[Config](), k) {
			return fmt.Errorf("config %s: unknown key %q", name, k.String())
		}
	}
	return assetsDeclareDecimals(text)
}

// assetsDeclareDecimals refuses an [[assets]] entry of text without
// decimals, whose zero value is an asset without fractions: an entry
// replaces a built-in asset of its symbol whole, so it says every key.
// (usd_price and network_fee are checked by Validate: "" is never a value.)
func assetsDeclareDecimals(text string) error {
	var declared struct {
		Assets []struct {
			Decimals *int `toml:"decimals"`
		} `toml:"assets"`
	}
	if _, err := toml.Decode(text, &declared); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	for i, a := range declared.Assets {
		if a.Decimals == nil {
			return configError(fmt.Sprintf("assets[%d].decimals", i), "is required (write decimals = 0 for an asset without fractions): an entry replaces a built-in asset of its symbol whole")
		}
	}
	return nil
}

// declares reports whether the key path names a field of t exactly by its
// toml tag, through tables, arrays of tables and inline tables.
func declares(t reflect.Type, path []string) bool {
	for _, name := range path {
		for t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return false
		}
		f, ok := fieldTagged(t, name)
		if !ok {
			return false
		}
		t = f.Type
	}
	return true
}

// fieldTagged returns the field of struct type t whose toml name is
// exactly name.
func fieldTagged(t reflect.Type, name string) (reflect.StructField, bool) {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if tag == "" {
			tag = f.Name
		}
		if f.IsExported() && !f.Anonymous && tag != "-" && tag == name {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// envKey is one scalar configuration key settable from the environment.
type envKey struct {
	name  string // e.g. dispatch.poll_interval
	env   string // e.g. COMPLYBOX_DISPATCH_POLL_INTERVAL
	field reflect.Value
}

// envKeys lists every scalar key of c (top level and one table deep), with
// the field it sets.
func (c *Config) envKeys() []envKey {
	var keys []envKey
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			tag := t.Field(i).Tag.Get("toml")
			f := v.Field(i)
			switch {
			case f.Kind() == reflect.Struct && prefix == "":
				walk(f, tag+".")
			case isScalar(f):
				name := prefix + tag
				keys = append(keys, envKey{name: name, env: envName(name), field: f})
			}
		}
	}
	walk(reflect.ValueOf(c).Elem(), "")
	return keys
}

func isScalar(f reflect.Value) bool {
	switch f.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int64:
		return true
	case reflect.Slice:
		return f.Type().Elem() == reflect.TypeFor[Duration]() // retry_delays: a comma-separated list
	}
	return false
}

// envName returns the environment variable of key name ("dispatch.poll_interval").
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, ".", "_"))
}

// applyEnv sets every key named by a COMPLYBOX_ variable of environ. A bad
// value is an error naming the variable and the key; a variable that names
// no key is returned as a warning.
func (c *Config) applyEnv(environ []string) ([]string, error) {
	byEnv := map[string]envKey{}
	for _, k := range c.envKeys() {
		byEnv[k.env] = k
	}
	var warnings []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) {
			continue
		}
		k, ok := byEnv[name]
		if !ok {
			warnings = append(warnings, fmt.Sprintf("environment variable %s names no configuration key; ignored", name))
			continue
		}
		if err := setFromString(k.field, value); err != nil {
			return warnings, fmt.Errorf("config: %s (key %s): %w", name, k.name, err)
		}
	}
	sort.Strings(warnings)
	return warnings, nil
}

func setFromString(f reflect.Value, s string) error {
	s = strings.TrimSpace(s)
	switch {
	case f.Type() == reflect.TypeFor[Duration]():
		var d Duration
		if err := d.UnmarshalText([]byte(s)); err != nil {
			return err
		}
		f.Set(reflect.ValueOf(d))
	case f.Kind() == reflect.Slice:
		// "10s,30s,1m"; the TOML form ["10s", "30s"] is accepted too.
		var ds []Duration
		for part := range strings.SplitSeq(strings.Trim(s, "[] "), ",") {
			var d Duration
			if err := d.UnmarshalText([]byte(strings.Trim(part, "\"' "))); err != nil {
				return err
			}
			ds = append(ds, d)
		}
		f.Set(reflect.ValueOf(ds))
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Bool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a boolean (true or false)", s)
		}
		f.SetBool(v)
	case f.Kind() == reflect.Int || f.Kind() == reflect.Int64:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		f.SetInt(v)
	default:
		return fmt.Errorf("unsupported key type %s", f.Type())
	}
	return nil
}

// configError is a validation failure naming its key.
func configError(key, format string, args ...any) error {
	return fmt.Errorf("config: %s: %s", key, fmt.Sprintf(format, args...))
}

// Validate reports the first impossible value, naming its key.
func (c *Config) Validate() error {
	if err := c.Branding.validate(); err != nil {
		return err
	}
	if err := c.Quality.validate(); err != nil {
		return err
	}
	if err := validListen("listen", c.Listen); err != nil {
		return err
	}
	if c.PublicURL != "" {
		if err := validPublicURL(c.PublicURL); err != nil {
			return err
		}
	}
	if c.DB == "" {
		return configError("db", "must name a file")
	}
	seen := map[string]bool{}
	for i, cr := range c.Credentials {
		key := fmt.Sprintf("credentials[%d]", i)
		switch {
		case seen[cr.Key]:
			return configError(key+".key", "%q is listed twice", cr.Key)
		case cr.Key == "":
			return configError(key+".key", "is required")
		case cr.Secret == "":
			return configError(key+".secret", "is required")
		case cr.Environment != "" && !store.Env(cr.Environment).Valid():
			return configError(key+".environment", "%q is not sandbox or production", cr.Environment)
		case cr.Role != "" && cr.Role != store.RolePartner && cr.Role != store.RoleAdmin:
			return configError(key+".role", "%q is not partner or admin", cr.Role)
		}
		if err := store.CheckCredentialName(cr.Name); err != nil {
			return configError(key+".name", "%s", store.AsError(err).Message)
		}
		seen[cr.Key] = true
	}
	if c.PartnerAPI.SpawnRateLimitPerHour < 1 {
		return configError("partner_api.spawn_rate_limit_per_hour", "must be at least 1")
	}
	if c.PartnerAPI.RegenerateLinkPerChildCapPer24h < 1 {
		return configError("partner_api.regenerate_link_per_child_cap_per_24h", "must be at least 1")
	}
	if err := c.KYC.validate(); err != nil {
		return err
	}
	if err := c.Dispatch.validate(); err != nil {
		return err
	}
	if err := c.Dispatch.allowsCallback(c.KYC.CallbackURL); err != nil {
		return err
	}
	if c.Chain.StepDelay < 0 {
		return configError("chain.step_delay", "must not be negative")
	}
	if c.Retention.Deliveries <= 0 {
		return configError("retention.deliveries", "must be a positive duration such as \"720h\"")
	}
	if time.Duration(c.Retention.Deliveries) > store.MaxDeliveryRetention {
		return configError("retention.deliveries", "%s is too long: at most %dh (10 years)",
			time.Duration(c.Retention.Deliveries), store.MaxDeliveryRetention/time.Hour)
	}
	if !slices.Contains([]string{"debug", "info", "warn", "error"}, c.Log.Level) {
		return configError("log.level", "%q is not debug, info, warn or error", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return configError("log.format", "%q is not text or json", c.Log.Format)
	}
	names := map[string]bool{}
	for i, l := range c.Levels {
		key := fmt.Sprintf("levels[%d]", i)
		if err := validLevel(key, l); err != nil {
			return err
		}
		if names[l.Name] {
			return configError(key+".name", "level %q is listed twice", l.Name)
		}
		names[l.Name] = true
	}
	for _, d := range c.KYC.levelDefaults() {
		if l, ok := store.ConfiguredLevel(c.Levels, d.name); ok && l.ApplicantType != d.applicantType {
			return configError(d.key, "level %q is for %s applicants; this key needs a level for %s applicants", d.name, l.ApplicantType, d.applicantType)
		}
	}
	symbols := map[string]bool{}
	for i, a := range c.Assets {
		key := fmt.Sprintf("assets[%d]", i)
		if err := validAsset(key, a); err != nil {
			return err
		}
		sym := strings.ToUpper(a.Symbol)
		if symbols[sym] {
			return configError(key+".symbol", "asset %q is listed twice", sym)
		}
		symbols[sym] = true
	}
	return nil
}

// minCallbackSecret is the fewest bytes a callback signing secret may
// decode to.
const minCallbackSecret = 24

// validCallbackSecret checks a configured KYC callback secret: standard
// base64 (as Standard Webhooks libraries decode it, after an optional
// whsec_ prefix) of at least 24 bytes, so receivers built on that spec
// verify deliveries unchanged (SPEC §5).
func validCallbackSecret(key, v string) error {
	if strings.ContainsAny(v, "\r\n\t ") {
		// Go's base64 skips line breaks; the Standard Webhooks libraries
		// refuse them, and the X-Webhook-Signature is keyed with them: no
		// one spelling of the secret would verify both signatures.
		return configError(key, "must be one line without spaces or line breaks (`openssl rand -base64 N` wraps its output past N = 48: use `openssl rand -base64 32`)")
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(v, "whsec_"))
	if err != nil {
		return configError(key, "must be standard base64 (optionally prefixed whsec_), as Standard Webhooks libraries decode it; generate one with `openssl rand -base64 32`, or leave it empty and complybox generates one")
	}
	if len(b) < minCallbackSecret {
		return configError(key, "decodes to %d bytes; at least %d are required (generate one with `openssl rand -base64 32`)", len(b), minCallbackSecret)
	}
	return nil
}

// levelDefault is a key of [kyc] that names a level, with the applicant
// type that level must be for.
type levelDefault struct{ key, name, applicantType string }

func (k KYCConfig) levelDefaults() []levelDefault {
	return []levelDefault{
		{"kyc.default_individual_level", k.DefaultIndividualLevel, store.TypeIndividual},
		{"kyc.default_company_level", k.DefaultCompanyLevel, store.TypeCompany},
		{"kyc.ubo_level", k.UBOLevel, store.TypeIndividual},
	}
}

// unknownLevels returns a warning for each [kyc] level key that names
// neither a built-in nor a configured level: not impossible, since a level
// of that name can be created through the API, but every applicant that
// relies on the default answers 404 until one is.
func (c Config) unknownLevels() []string {
	var out []string
	for _, d := range c.KYC.levelDefaults() {
		if _, ok := store.ConfiguredLevel(c.Levels, d.name); !ok {
			out = append(out, fmt.Sprintf("%s names level %q, which is neither built in nor in [[levels]]: calls that rely on it answer 404 level_not_found until a level of that name is created (POST /v1/levels)", d.key, d.name))
		}
	}
	return out
}

func (k KYCConfig) validate() error {
	if k.CallbackURL != "" {
		if err := validHTTPURL("kyc.callback_url", k.CallbackURL); err != nil {
			return err
		}
	}
	for _, d := range k.levelDefaults() {
		if d.name == "" {
			return configError(d.key, "must name a level")
		}
	}
	if k.ReviewDelay < 0 {
		return configError("kyc.review_delay", "must not be negative")
	}
	if k.CallbackSecret != "" {
		if err := validCallbackSecret("kyc.callback_secret", k.CallbackSecret); err != nil {
			return err
		}
	}
	if k.SanctionsFile != "" {
		// Read now, as branding.logo is: a list that cannot be read would
		// make every production screening "not_screened".
		f, err := os.Open(k.SanctionsFile)
		if err == nil {
			_, err = f.Read(make([]byte, 1))
			f.Close()
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return configError("kyc.sanctions_file", "%v", err)
		}
	}
	return nil
}

func (d DispatchConfig) validate() error {
	if d.PollInterval < minPollInterval || d.PollInterval > maxPollInterval {
		return configError("dispatch.poll_interval", "%s is out of %s..%s", d.PollInterval, minPollInterval, maxPollInterval)
	}
	if d.AttemptTimeout <= 0 {
		return configError("dispatch.attempt_timeout", "must be positive")
	}
	if d.AttemptTimeout > maxAttemptTimeout {
		return configError("dispatch.attempt_timeout", "%s is more than %s", d.AttemptTimeout, maxAttemptTimeout)
	}
	if len(d.RetryDelays) == 0 {
		return configError("dispatch.retry_delays", "must list at least one delay")
	}
	for i, r := range d.RetryDelays {
		if r < 0 {
			return configError(fmt.Sprintf("dispatch.retry_delays[%d]", i), "must not be negative")
		}
	}
	if d.MaxAttempts < 1 {
		return configError("dispatch.max_attempts", "must be at least 1")
	}
	if d.Concurrency < 1 || d.Concurrency > maxConcurrency {
		return configError("dispatch.concurrency", "must be 1 to %d", maxConcurrency)
	}
	if !slices.Contains([]string{"never", "loopback", "always"}, d.AllowHTTP) {
		return configError("dispatch.allow_http", "%q is not never, loopback or always", d.AllowHTTP)
	}
	return nil
}

// minPollInterval and maxPollInterval bound dispatch.poll_interval. New
// events and retries wake the delivery loop at once, so a shorter poll only
// burns CPU (at 1ns an idle server used more than a core, at 1ms 7 % of
// one: a test setup may want that); a longer one leaves what nothing wakes
// the loop for waiting too long.
const (
	minPollInterval = Duration(time.Millisecond)
	maxPollInterval = Duration(time.Hour)
)

// maxAttemptTimeout bounds dispatch.attempt_timeout: a claimed delivery is
// leased for twice the timeout plus 10s (SPEC §5: longer than an attempt),
// and a timeout near the largest duration overflows that lease, so the
// delivery is claimed, and sent, again and again at once. No receiver
// worth waiting for takes an hour to answer.
const maxAttemptTimeout = Duration(time.Hour)

// maxConcurrency bounds dispatch.concurrency: the dispatcher holds up to
// four times as many claimed jobs in memory and as many open connections
// as attempts in flight, so a larger value only exhausts the process.
const maxConcurrency = 1024

// allowsCallback applies allow_http and allow_private_networks to the KYC
// callback URL, as PUT /webhooks/outbound does to the custody URL: plain
// http only to a loopback host under "loopback", never under "never"; a
// private, link-local or (under "never") loopback address refused unless
// allowed. A host name is not resolved at start-up: the dispatcher checks
// every address it connects to.
func (d DispatchConfig) allowsCallback(raw string) error {
	u, err := url.Parse(raw)
	if raw == "" || err != nil {
		return nil
	}
	policy := urlpolicy.Policy{AllowHTTP: d.AllowHTTP, AllowPrivateNetworks: d.AllowPrivateNetworks}
	if ip, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && policy.Disallowed(ip) {
		return configError("kyc.callback_url", "%q is a private network or loopback address that dispatch.allow_private_networks or dispatch.allow_http forbids", raw)
	}
	if u.Scheme != "http" {
		return nil
	}
	switch d.AllowHTTP {
	case "never":
		return configError("kyc.callback_url", "%q must use https: dispatch.allow_http is \"never\"", raw)
	case "loopback":
		host := strings.ToLower(u.Hostname())
		ip, err := netip.ParseAddr(host)
		if !(err == nil && ip.IsLoopback()) && host != "localhost" && !strings.HasSuffix(host, ".localhost") {
			return configError("kyc.callback_url", "%q must use https: plain http is allowed only to loopback hosts (dispatch.allow_http)", raw)
		}
	}
	return nil
}

func validListen(key, addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return configError(key, "%q is not host:port (e.g. 127.0.0.1:8080)", addr)
	}
	if strings.ContainsAny(host, " /") {
		return configError(key, "%q has a bad host", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return configError(key, "%q has a bad port", addr)
	}
	return nil
}

func validHTTPURL(key, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return configError(key, "%q is not an absolute http(s) URL", raw)
	}
	if u.User != nil {
		return configError(key, "%q must not carry credentials", u.Redacted()) // the message goes to the log
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
			return configError(key, "%q has port %s; a port is 1 to 65535", raw, port)
		}
	}
	return nil
}

// validPublicURL checks public_url, the base that links append their path
// to: an absolute http(s) URL without query or fragment, which would end
// up in the middle of every link.
func validPublicURL(raw string) error {
	if err := validHTTPURL("public_url", raw); err != nil {
		return err
	}
	u, _ := url.Parse(raw)
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return configError("public_url", "%q must be a base URL without query or fragment: links append /sdk/… and /l/… to it", raw)
	}
	if strings.Trim(u.EscapedPath(), "/") != "" {
		// The hosted pages, their assets and redirects, and the console
		// live at the root of the host; a proxy under a prefix would
		// break every one of their links.
		return configError("public_url", "%q must name the root of a host, without a path: complybox serves its pages at the root (%s), so a proxy must give it a host (or a port) of its own", raw, "/sdk/…, /l/…, /console")
	}
	return nil
}

// validLevel checks a [[levels]] entry with the store's own level rules, so
// a bad level stops start-up instead of being skipped later.
func validLevel(key string, l store.Level) error {
	return storeConfigError(key, l.Validate())
}

func validAsset(key string, a store.Asset) error {
	if a.ID != "" && !store.IsUUID(a.ID) {
		return configError(key+".id", "%q is not a uuid", a.ID)
	}
	return storeConfigError(key, a.Validate())
}

// storeConfigError turns a store validation error of the entry at key into
// a configuration error naming the TOML key (applicantType is
// applicant_type, steps[1].kind stays steps[1].kind).
func storeConfigError(key string, err error) error {
	if err == nil {
		return nil
	}
	e := store.AsError(err)
	if e.Field == "" {
		return configError(key, "%s", e.Message)
	}
	return configError(key+"."+snakePath(e.Field), "%s", e.Message)
}

// snakePath writes every camelCase name of a field path in snake_case.
func snakePath(field string) string {
	var b strings.Builder
	for i, c := range field {
		if c >= 'A' && c <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			c += 'a' - 'A'
		}
		b.WriteRune(c)
	}
	return b.String()
}

// settings maps the configuration onto the store's settings. publicURL is
// the base of links (public_url or the one derived from the bound address).
func (c *Config) settings(publicURL string) store.Settings {
	return store.Settings{
		PublicURL:                       publicURL,
		SpawnRateLimitPerHour:           c.PartnerAPI.SpawnRateLimitPerHour,
		RegenerateLinkPerChildCapPer24h: c.PartnerAPI.RegenerateLinkPerChildCapPer24h,
		KYC: store.KYCSettings{
			CallbackURL:            c.KYC.CallbackURL,
			CallbackSecret:         c.KYC.CallbackSecret,
			DefaultIndividualLevel: c.KYC.DefaultIndividualLevel,
			DefaultCompanyLevel:    c.KYC.DefaultCompanyLevel,
			UBOLevel:               c.KYC.UBOLevel,
			ReviewDelay:            time.Duration(c.KYC.ReviewDelay),
			SanctionsFile:          c.KYC.SanctionsFile,
		},
		Chain: store.ChainSettings{
			AutoAdvance: c.Chain.AutoAdvance,
			StepDelay:   time.Duration(c.Chain.StepDelay),
		},
		Retention:            store.RetentionSettings{Deliveries: time.Duration(c.Retention.Deliveries)},
		AllowHTTP:            c.Dispatch.AllowHTTP,
		AllowPrivateNetworks: c.Dispatch.AllowPrivateNetworks,
		Levels:               c.Levels,
		Assets:               c.Assets,
	}
}

// dispatchConfig maps the configuration onto the dispatcher's.
func (c *Config) dispatchConfig(version string) dispatch.Config {
	delays := make([]time.Duration, len(c.Dispatch.RetryDelays))
	for i, d := range c.Dispatch.RetryDelays {
		delays[i] = time.Duration(d)
	}
	return dispatch.Config{
		PollInterval:   time.Duration(c.Dispatch.PollInterval),
		AttemptTimeout: time.Duration(c.Dispatch.AttemptTimeout),
		RetryDelays:    delays,
		MaxAttempts:    c.Dispatch.MaxAttempts,
		Concurrency:    c.Dispatch.Concurrency,
		Version:        version,
	}
}

// publicURLFor returns public_url, or when it is not set, the base URL of
// the bound address addr. Its host is the configured listen host, since
// the bound address cannot tell 0.0.0.0 from :: (on a dual-stack host a
// listener on 0.0.0.0 reports [::]); an unspecified host becomes loopback,
// so links work on this machine. Its port is the bound one (the real port
// for port 0).
func (c *Config) publicURLFor(addr net.Addr) string {
	if c.PublicURL != "" {
		return strings.TrimRight(c.PublicURL, "/")
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if listenHost, _, err := net.SplitHostPort(c.Listen); err == nil {
		if loopback, ok := loopbackFor(listenHost); ok {
			host = loopback
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}

// loopbackFor returns the loopback address that links use for an
// unspecified listen host: 127.0.0.1 for "" (every address, IPv4 too) and
// 0.0.0.0, ::1 for ::. It reports false for any other host.
func loopbackFor(listenHost string) (string, bool) {
	if listenHost == "" {
		return "127.0.0.1", true
	}
	ip, err := netip.ParseAddr(listenHost)
	switch {
	case err != nil || !ip.IsUnspecified():
		return "", false
	case ip.Is4():
		return "127.0.0.1", true
	}
	return "::1", true
}

// newLogger returns the slog logger of l, writing to w.
func newLogger(l LogConfig, w io.Writer) *slog.Logger {
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[l.Level]
	opts := &slog.HandlerOptions{Level: level}
	if l.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
