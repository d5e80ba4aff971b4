package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/complybox/complybox/store"
)

// writeConfig writes text to a config file under t.TempDir.
func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "complybox.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// wantErr fails unless err is an error mentioning every part.
func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error; want one mentioning %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Fatalf("error %q does not mention %q", err, p)
		}
	}
}

func TestExampleConfig(t *testing.T) {
	t.Parallel()
	t.Run("EqualsDefaults", func(t *testing.T) {
		cfg, warnings, err := loadConfig(configFlags{path: "config.example.toml"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) > 0 {
			t.Fatalf("warnings: %q", warnings)
		}
		if want := DefaultConfig(); !reflect.DeepEqual(cfg, want) {
			t.Fatalf("config.example.toml differs from DefaultConfig():\n got %+v\nwant %+v", cfg, want)
		}
	})
	t.Run("DocumentsEveryKey", func(t *testing.T) {
		var c Config
		md, err := toml.DecodeFile("config.example.toml", &c)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range c.envKeys() {
			if !md.IsDefined(strings.Split(k.name, ".")...) {
				t.Errorf("config.example.toml does not set %s", k.name)
			}
		}
	})
	t.Run("CommentedTablesParse", func(t *testing.T) {
		// The commented [[credentials]], [[levels]] and [[assets]] examples
		// must be valid when a user uncomments them.
		b, err := os.ReadFile("config.example.toml")
		if err != nil {
			t.Fatal(err)
		}
		var blocks []string
		var cur []string
		for _, line := range strings.Split(string(b), "\n") {
			switch {
			case strings.HasPrefix(line, "# [["):
				cur = []string{strings.TrimPrefix(line, "# ")}
			case cur != nil && strings.HasPrefix(line, "#"):
				cur = append(cur, strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
			case cur != nil:
				blocks = append(blocks, strings.Join(cur, "\n"))
				cur = nil
			}
		}
		if cur != nil {
			blocks = append(blocks, strings.Join(cur, "\n"))
		}
		if len(blocks) != 3 {
			t.Fatalf("found %d commented tables, want 3", len(blocks))
		}
		cfg, _, err := loadConfig(configFlags{path: writeConfig(t, strings.Join(blocks, "\n\n"))}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Credentials) != 1 || len(cfg.Levels) != 1 || len(cfg.Assets) != 1 {
			t.Fatalf("got %d credentials, %d levels, %d assets", len(cfg.Credentials), len(cfg.Levels), len(cfg.Assets))
		}
		if l := cfg.Levels[0]; len(l.Steps) != 5 || l.Steps[2].Kind != "questionnaire" || !l.Steps[4].Optional || l.Questionnaire[0].Options[2] != "other" {
			t.Fatalf("level decoded as %+v", l)
		}
		if a := cfg.Assets[0]; a.Decimals != 8 || a.NetworkFee != "0.0001" {
			t.Fatalf("asset decoded as %+v", a)
		}
	})
}

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	t.Run("NoFileIsDefaults", func(t *testing.T) {
		cfg, _, err := loadConfig(configFlags{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(cfg, DefaultConfig()) {
			t.Fatalf("got %+v", cfg)
		}
		if cfg.Listen != "127.0.0.1:8080" || cfg.DB != "complybox.db" || cfg.Dispatch.MaxAttempts != 5 {
			t.Fatalf("defaults: %+v", cfg)
		}
	})
	t.Run("ErrUnknownKey", func(t *testing.T) {
		for text, key := range map[string]string{
			"lsten = \"127.0.0.1:1\"\n":                       "lsten",
			"[dispatch]\npoll_intervall = \"1s\"\n":           "dispatch.poll_intervall",
			"[[levels]]\nname = \"x\"\napplicant_typ = 1\n":   "levels.applicant_typ",
			"[nosuchtable]\nkey = 1\n":                        "nosuchtable",
			"[[credentials]]\nkey = \"k\"\nsecrett = \"s\"\n": "credentials.secrett",
		} {
			_, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil)
			wantErr(t, err, "unknown key", key)
		}
	})
	t.Run("ErrKeyCase", func(t *testing.T) {
		// TOML keys are case-sensitive: a key that differs from a known
		// one only in case is unknown, as is the second of listen/Listen.
		for text, key := range map[string]string{
			"LISTEN = \"127.0.0.1:1\"\n":                                       "LISTEN",
			"listen = \"127.0.0.1:1\"\nListen = \"127.0.0.1:2\"\n":             "Listen",
			"[Retention]\ndeliveries = \"5h\"\n":                               "Retention",
			"[retention]\nDeliveries = \"5h\"\n":                               "retention.Deliveries",
			"[DISPATCH]\nMax_Attempts = 0\n":                                   "DISPATCH",
			"[[levels]]\nName = \"x\"\n":                                       "levels.Name",
			"[[levels]]\nname = \"x\"\nsteps = [{Kind = \"aml\"}]\n":           "levels.steps.Kind",
			"[[levels]]\nname = \"x\"\n[[levels.questionnaire]]\nID = \"q\"\n": "levels.questionnaire.ID",
			"[[Assets]]\nsymbol = \"X\"\n":                                     "Assets",
			"[[credentials]]\nkey = \"k\"\nSecret = \"s\"\n":                   "credentials.Secret",
		} {
			_, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil)
			wantErr(t, err, fmt.Sprintf("unknown key %q", key))
		}
		r := runCmd(t, "serve", "--config", writeConfig(t, "LISTEN = \"127.0.0.1:0\"\n"), "--db", filepath.Join(t.TempDir(), "c.db"))
		wantErr(t, r.err(), `unknown key "LISTEN"`)
		if r.code != 1 {
			t.Errorf("exit code %d, want 1", r.code)
		}
	})
	t.Run("ErrBadDuration", func(t *testing.T) {
		_, _, err := loadConfig(configFlags{path: writeConfig(t, "[kyc]\nreview_delay = \"2 seconds\"\n")}, nil)
		wantErr(t, err, "kyc.review_delay", "not a duration")
		_, _, err = loadConfig(configFlags{path: writeConfig(t, "[dispatch]\nretry_delays = [\"1s\", \"soon\"]\n")}, nil)
		wantErr(t, err, "dispatch.retry_delays", "not a duration")
		_, _, err = loadConfig(configFlags{}, []string{"COMPLYBOX_DISPATCH_POLL_INTERVAL=fast"})
		wantErr(t, err, "COMPLYBOX_DISPATCH_POLL_INTERVAL", "dispatch.poll_interval", "not a duration")
	})
	t.Run("ErrBadType", func(t *testing.T) {
		_, _, err := loadConfig(configFlags{path: writeConfig(t, "[dispatch]\nmax_attempts = \"five\"\n")}, nil)
		wantErr(t, err, "dispatch.max_attempts")
		_, _, err = loadConfig(configFlags{}, []string{"COMPLYBOX_CHAIN_AUTO_ADVANCE=maybe"})
		wantErr(t, err, "COMPLYBOX_CHAIN_AUTO_ADVANCE", "chain.auto_advance")
	})
	t.Run("FileListReplacesDefault", func(t *testing.T) {
		cfg, _, err := loadConfig(configFlags{path: writeConfig(t, "[dispatch]\nretry_delays = [\"1s\", \"2s\"]\n")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := []Duration{Duration(time.Second), Duration(2 * time.Second)}; !reflect.DeepEqual(cfg.Dispatch.RetryDelays, want) {
			t.Fatalf("retry_delays = %v, want %v", cfg.Dispatch.RetryDelays, want)
		}
	})
	t.Run("ErrSyntax", func(t *testing.T) {
		_, _, err := loadConfig(configFlags{path: writeConfig(t, "listen = \"127.0.0.1:1\"\n[dispatch\n")}, nil)
		wantErr(t, err, "complybox.toml: line ", "table name")
	})
	t.Run("ErrMissingFile", func(t *testing.T) {
		_, _, err := loadConfig(configFlags{path: filepath.Join(t.TempDir(), "none.toml")}, nil)
		wantErr(t, err, "none.toml")
	})
	t.Run("Precedence", func(t *testing.T) {
		file := writeConfig(t, "listen = \"127.0.0.1:1111\"\ndb = \"file.db\"\n[dispatch]\nmax_attempts = 7\nconcurrency = 3\n")
		env := []string{"COMPLYBOX_LISTEN=127.0.0.1:2222", "COMPLYBOX_DB=env.db", "COMPLYBOX_DISPATCH_MAX_ATTEMPTS=9", "PATH=/bin"}
		cfg, warnings, err := loadConfig(configFlags{path: file, listen: "127.0.0.1:3333"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) > 0 {
			t.Fatalf("warnings: %q", warnings)
		}
		if cfg.Listen != "127.0.0.1:3333" {
			t.Errorf("listen = %s; the flag must beat the environment", cfg.Listen)
		}
		if cfg.DB != "env.db" || cfg.Dispatch.MaxAttempts != 9 {
			t.Errorf("db = %s, max_attempts = %d; the environment must beat the file", cfg.DB, cfg.Dispatch.MaxAttempts)
		}
		if cfg.Dispatch.Concurrency != 3 {
			t.Errorf("concurrency = %d; the file must beat the default", cfg.Dispatch.Concurrency)
		}
		cfg, _, err = loadConfig(configFlags{path: file, db: "flag.db"}, env)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.DB != "flag.db" || cfg.Listen != "127.0.0.1:2222" {
			t.Errorf("db = %s, listen = %s", cfg.DB, cfg.Listen)
		}
	})
	t.Run("EnvEveryScalarKey", func(t *testing.T) {
		env := []string{
			"COMPLYBOX_PUBLIC_URL=https://kyc.example.com",
			"COMPLYBOX_PARTNER_API_SPAWN_RATE_LIMIT_PER_HOUR=10",
			"COMPLYBOX_PARTNER_API_REGENERATE_LINK_PER_CHILD_CAP_PER_24H=2",
			"COMPLYBOX_KYC_CALLBACK_URL=https://partner.example.com/kyc",
			"COMPLYBOX_KYC_CALLBACK_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			"COMPLYBOX_KYC_REVIEW_DELAY=0s",
			"COMPLYBOX_DISPATCH_RETRY_DELAYS=100ms, 1s,2m",
			"COMPLYBOX_DISPATCH_ALLOW_HTTP=always",
			"COMPLYBOX_DISPATCH_ALLOW_PRIVATE_NETWORKS=true",
			"COMPLYBOX_CHAIN_AUTO_ADVANCE=false",
			"COMPLYBOX_CHAIN_STEP_DELAY=250ms",
			"COMPLYBOX_LOG_LEVEL=debug",
			"COMPLYBOX_LOG_FORMAT=json",
		}
		cfg, warnings, err := loadConfig(configFlags{}, env)
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) > 0 {
			t.Fatalf("warnings: %q", warnings)
		}
		want := DefaultConfig()
		want.PublicURL = "https://kyc.example.com"
		want.PartnerAPI = PartnerAPIConfig{SpawnRateLimitPerHour: 10, RegenerateLinkPerChildCapPer24h: 2}
		want.KYC.CallbackURL = "https://partner.example.com/kyc"
		want.KYC.CallbackSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
		want.KYC.ReviewDelay = 0
		want.Dispatch.RetryDelays = []Duration{Duration(100 * time.Millisecond), Duration(time.Second), Duration(2 * time.Minute)}
		want.Dispatch.AllowHTTP = "always"
		want.Dispatch.AllowPrivateNetworks = true
		want.Chain = ChainConfig{AutoAdvance: false, StepDelay: Duration(250 * time.Millisecond)}
		want.Log = LogConfig{Level: "debug", Format: "json"}
		if !reflect.DeepEqual(cfg, want) {
			t.Fatalf("got  %+v\nwant %+v", cfg, want)
		}
	})
	t.Run("WarnUnknownVariable", func(t *testing.T) {
		_, warnings, err := loadConfig(configFlags{}, []string{"COMPLYBOX_DISPATCH_POLL=1s", "COMPLYBOX_LISTEN=127.0.0.1:0", "OTHER_THING=1"})
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "COMPLYBOX_DISPATCH_POLL") {
			t.Fatalf("warnings = %q; want one naming COMPLYBOX_DISPATCH_POLL", warnings)
		}
	})
	t.Run("RetryDelaysTOMLForm", func(t *testing.T) {
		cfg, _, err := loadConfig(configFlags{}, []string{`COMPLYBOX_DISPATCH_RETRY_DELAYS=["1s", "2s"]`})
		if err != nil {
			t.Fatal(err)
		}
		if want := []Duration{Duration(time.Second), Duration(2 * time.Second)}; !reflect.DeepEqual(cfg.Dispatch.RetryDelays, want) {
			t.Fatalf("retry_delays = %v", cfg.Dispatch.RetryDelays)
		}
		_, _, err = loadConfig(configFlags{}, []string{"COMPLYBOX_DISPATCH_RETRY_DELAYS=1s,,2s"})
		wantErr(t, err, "COMPLYBOX_DISPATCH_RETRY_DELAYS")
	})
}

// TestValidateHidesURLPassword: a URL refused for carrying credentials is
// named without its password (the message is printed and logged).
func TestValidateHidesURLPassword(t *testing.T) {
	t.Parallel()
	_, _, err := loadConfig(configFlags{}, []string{"COMPLYBOX_KYC_CALLBACK_URL=https://user:s3cr3t-pw@partner.example.com/kyc"})
	wantErr(t, err, "kyc.callback_url")
	if strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("the error shows the password: %v", err)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, file, key string
	}{
		{"ListenNotHostPort", `listen = "8080"`, "listen"},
		{"BrandingAccent", "[branding]\naccent_color = \"red\"", "branding.accent_color"},
		{"BrandingAccentShort", "[branding]\naccent_color = \"#fff\"", "branding.accent_color"},
		{"BrandingEmail", "[branding]\nsupport_email = \"help at acme\"", "branding.support_email"},
		{"BrandingLogoMissing", "[branding]\nlogo = \"/nonexistent/logo.png\"", "branding.logo"},
		{"BrandingLogoNotImage", "[branding]\nlogo = \"config.example.toml\"", "branding.logo"},
		{"ListenBadPort", `listen = "127.0.0.1:99999"`, "listen"},
		{"PublicURLRelative", `public_url = "/kyc"`, "public_url"},
		{"PublicURLScheme", `public_url = "ftp://example.com"`, "public_url"},
		{"PublicURLQuery", `public_url = "https://kyc.example.com/base?x=1"`, "public_url"},
		{"PublicURLFragment", `public_url = "https://kyc.example.com/base#top"`, "public_url"},
		{"PublicURLBadPort", `public_url = "http://kyc.example.com:99999"`, "public_url"},
		{"PublicURLCredentials", `public_url = "https://u:p@kyc.example.com"`, "public_url"},
		// The pages and their links live at the root: a prefix would break
		// every link a hosted page or the console makes.
		{"PublicURLPath", `public_url = "https://partner.example.com/kyc"`, "public_url"},
		{"CallbackURLBadPort", "[kyc]\ncallback_url = \"https://partner.example.com:99999/kyc\"", "kyc.callback_url"},
		{"DBEmpty", `db = ""`, "db"},
		{"CredentialNoSecret", "[[credentials]]\nkey = \"k\"", "credentials[0].secret"},
		{"CredentialEnvironment", "[[credentials]]\nkey = \"k\"\nsecret = \"s\"\nenvironment = \"staging\"", "credentials[0].environment"},
		{"CredentialTwice", "[[credentials]]\nkey = \"k\"\nsecret = \"s\"\n[[credentials]]\nkey = \"k\"\nsecret = \"t\"", "credentials[1].key"},
		{"CredentialRole", "[[credentials]]\nkey = \"k\"\nsecret = \"s\"\nrole = \"root\"", "credentials[0].role"},
		{"SpawnLimit", "[partner_api]\nspawn_rate_limit_per_hour = 0", "partner_api.spawn_rate_limit_per_hour"},
		{"RegenerateCap", "[partner_api]\nregenerate_link_per_child_cap_per_24h = -1", "partner_api.regenerate_link_per_child_cap_per_24h"},
		{"CallbackURL", "[kyc]\ncallback_url = \"partner.example.com\"", "kyc.callback_url"},
		{"CallbackURLPlainHTTP", "[kyc]\ncallback_url = \"http://partner.example.com/kyc\"", "kyc.callback_url"},
		{"CallbackURLHTTPNever", "[kyc]\ncallback_url = \"http://127.0.0.1:9000/kyc\"\n[dispatch]\nallow_http = \"never\"", "kyc.callback_url"},
		{"CallbackURLPrivate", "[kyc]\ncallback_url = \"https://10.0.0.1/hook\"", "kyc.callback_url"},
		{"CallbackURLLinkLocal", "[kyc]\ncallback_url = \"https://[fe80::1]/hook\"", "kyc.callback_url"},
		{"CallbackURLLoopbackNever", "[kyc]\ncallback_url = \"https://127.0.0.1/hook\"\n[dispatch]\nallow_http = \"never\"", "kyc.callback_url"},
		{"UBOLevelEmpty", "[kyc]\nubo_level = \"\"", "kyc.ubo_level"},
		// A level of the wrong applicant type, built in or configured, can
		// never serve the key (SPEC §1: an impossible value stops start-up).
		{"DefaultIndividualCompanyLevel", "[kyc]\ndefault_individual_level = \"kyb-level\"", "kyc.default_individual_level"},
		{"DefaultCompanyIndividualLevel", "[kyc]\ndefault_company_level = \"basic-kyc-level\"", "kyc.default_company_level"},
		{"UBOLevelCompany", "[kyc]\nubo_level = \"kyb-level\"", "kyc.ubo_level"},
		{"UBOLevelConfiguredCompany", "[kyc]\nubo_level = \"co\"\n[[levels]]\nname = \"co\"\napplicant_type = \"company\"\nsteps = [{kind = \"aml\"}]", "kyc.ubo_level"},
		{"BuiltinReplacedByOtherType", "[[levels]]\nname = \"basic-kyc-level\"\napplicant_type = \"company\"\nsteps = [{kind = \"aml\"}]", "kyc.default_individual_level"},
		{"ReviewDelayNegative", "[kyc]\nreview_delay = \"-1s\"", "kyc.review_delay"},
		{"SanctionsFileMissing", "[kyc]\nsanctions_file = \"/nonexistent/sanctions.txt\"", "kyc.sanctions_file"},
		// A directory cannot be read as a list: every screening would say
		// not_screened.
		{"SanctionsFileDirectory", "[kyc]\nsanctions_file = \"/tmp\"", "kyc.sanctions_file"},
		{"PollIntervalZero", "[dispatch]\npoll_interval = \"0s\"", "dispatch.poll_interval"},
		// An idle server must not spin (1ns burnt more than a core).
		{"PollIntervalTiny", "[dispatch]\npoll_interval = \"1ns\"", "dispatch.poll_interval"},
		{"PollIntervalUnder1ms", "[dispatch]\npoll_interval = \"999us\"", "dispatch.poll_interval"},
		{"PollIntervalOverHour", "[dispatch]\npoll_interval = \"61m\"", "dispatch.poll_interval"},
		{"AttemptTimeoutZero", "[dispatch]\nattempt_timeout = \"0s\"", "dispatch.attempt_timeout"},
		// The lease, 2*attempt_timeout+10s, must not overflow (SPEC §5).
		{"AttemptTimeoutHuge", "[dispatch]\nattempt_timeout = \"2000000h\"", "dispatch.attempt_timeout"},
		{"AttemptTimeoutOverHour", "[dispatch]\nattempt_timeout = \"61m\"", "dispatch.attempt_timeout"},
		{"RetryDelaysEmpty", "[dispatch]\nretry_delays = []", "dispatch.retry_delays"},
		{"RetryDelayNegative", "[dispatch]\nretry_delays = [\"1s\", \"-1s\"]", "dispatch.retry_delays[1]"},
		{"MaxAttemptsZero", "[dispatch]\nmax_attempts = 0", "dispatch.max_attempts"},
		{"ConcurrencyZero", "[dispatch]\nconcurrency = 0", "dispatch.concurrency"},
		{"ConcurrencyHuge", "[dispatch]\nconcurrency = 100000000", "dispatch.concurrency"},
		{"AllowHTTP", "[dispatch]\nallow_http = \"sometimes\"", "dispatch.allow_http"},
		{"StepDelayNegative", "[chain]\nstep_delay = \"-3s\"", "chain.step_delay"},
		{"LogLevel", "[log]\nlevel = \"verbose\"", "log.level"},
		{"LogFormat", "[log]\nformat = \"xml\"", "log.format"},
		{"LevelNoName", "[[levels]]\napplicant_type = \"individual\"\nsteps = [{kind = \"selfie\"}]", "levels[0].name"},
		{"LevelBadName", "[[levels]]\nname = \"my level\"\nsteps = [{kind = \"selfie\"}]", "levels[0].name"},
		{"LevelType", "[[levels]]\nname = \"x\"\napplicant_type = \"robot\"\nsteps = [{kind = \"selfie\"}]", "levels[0].applicant_type"},
		{"LevelNoSteps", "[[levels]]\nname = \"x\"\napplicant_type = \"individual\"", "levels[0].steps"},
		{"LevelStepKind", "[[levels]]\nname = \"x\"\napplicant_type = \"individual\"\nsteps = [{kind = \"selfie\"}, {kind = \"dna\"}]", "levels[0].steps[1].kind"},
		{"LevelStepTwice", "[[levels]]\nname = \"x\"\nsteps = [{kind = \"selfie\"}, {kind = \"selfie\"}]", "levels[0].steps[1].kind"},
		{"LevelCompanyStep", "[[levels]]\nname = \"x\"\napplicant_type = \"company\"\nsteps = [{kind = \"selfie\"}]", "levels[0].steps[0].kind"},
		{"LevelPersonalField", "[[levels]]\nname = \"x\"\nsteps = [{kind = \"selfie\"}]\npersonal_info_fields = [\"firstName\", \"shoeSize\"]", "levels[0].personal_info_fields[1]"},
		{"LevelCompanyRequired", "[[levels]]\nname = \"x\"\napplicant_type = \"company\"\nsteps = [{kind = \"aml\"}]\ncompany_required_fields = [\"companyName\"]", "levels[0].company_required_fields[0]"},
		{"LevelQuestionType", "[[levels]]\nname = \"x\"\napplicant_type = \"individual\"\nsteps = [{kind = \"questionnaire\"}]\nquestionnaire = [{id = \"q\", text = \"Why?\", type = \"essay\"}]", "levels[0].questionnaire[0].type"},
		{"LevelQuestionText", "[[levels]]\nname = \"x\"\nsteps = [{kind = \"questionnaire\"}]\nquestionnaire = [{id = \"q\", type = \"text\"}]", "levels[0].questionnaire[0].text"},
		{"LevelTwice", "[[levels]]\nname = \"x\"\nsteps = [{kind = \"selfie\"}]\n[[levels]]\nname = \"x\"\nsteps = [{kind = \"poa\"}]", "levels[1].name"},
		{"AssetNoSymbol", "[[assets]]\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].symbol"},
		{"AssetBadSymbol", "[[assets]]\nsymbol = \"X/Y\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].symbol"},
		{"AssetNoNetwork", "[[assets]]\nsymbol = \"X\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].network"},
		{"AssetID", "[[assets]]\nid = \"btc\"\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].id"},
		{"AssetDecimals", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = -1\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].decimals"},
		{"AssetDecimalsHigh", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 37\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].decimals"},
		{"AssetNoDecimals", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[0].decimals"},
		{"AssetNoDecimalsInline", "assets = [{symbol = \"X\", network = \"x\", decimals = 0, usd_price = \"1\", network_fee = \"1\"}, {symbol = \"Y\", network = \"x\", usd_price = \"1\", network_fee = \"1\"}]", "assets[1].decimals"},
		{"AssetNoPrice", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 8\nnetwork_fee = \"0.1\"", "assets[0].usd_price"},
		{"AssetNoFee", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1\"", "assets[0].network_fee"},
		// An entry replaces the built-in of its symbol whole: nothing is
		// taken from it.
		{"AssetReplacedNoFee", "[[assets]]\nsymbol = \"BTC\"\nnetwork = \"bitcoin\"\ndecimals = 8\nusd_price = \"70000\"", "assets[0].network_fee"},
		{"AssetReplacedNoDecimals", "[[assets]]\nsymbol = \"XRP\"\nnetwork = \"ripple\"\nusd_price = \"1\"\nnetwork_fee = \"0.1\"\nneeds_memo = true", "assets[0].decimals"},
		{"AssetPriceExponent", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1e3\"\nnetwork_fee = \"0.1\"", "assets[0].usd_price"},
		{"AssetPriceNegative", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"-1\"\nnetwork_fee = \"0.1\"", "assets[0].usd_price"},
		{"AssetFeeTooPrecise", "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 2\nusd_price = \"1\"\nnetwork_fee = \"0.001\"", "assets[0].network_fee"},
		{"AssetTwice", "[[assets]]\nsymbol = \"ltc\"\nnetwork = \"x\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"\n[[assets]]\nsymbol = \"LTC\"\nnetwork = \"y\"\ndecimals = 8\nusd_price = \"1\"\nnetwork_fee = \"0.1\"", "assets[1].symbol"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := loadConfig(configFlags{path: writeConfig(t, tc.file+"\n")}, nil)
			wantErr(t, err, tc.key)
		})
	}
	t.Run("DispatchBounds", func(t *testing.T) {
		for _, text := range []string{
			"[dispatch]\nattempt_timeout = \"1h\"\npoll_interval = \"1ms\"\n",
			"[dispatch]\npoll_interval = \"1h\"\n",
		} {
			if _, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil); err != nil {
				t.Fatal(err)
			}
		}
	})
	t.Run("UnknownLevelWarns", func(t *testing.T) {
		// A level of that name can still be created through the API: a
		// warning naming the key, not an error.
		_, warnings, err := loadConfig(configFlags{}, []string{"COMPLYBOX_KYC_DEFAULT_COMPANY_LEVEL=later-level"})
		if err != nil {
			t.Fatal(err)
		}
		if len(warnings) != 1 || !strings.Contains(warnings[0], "kyc.default_company_level") || !strings.Contains(warnings[0], "later-level") {
			t.Fatalf("warnings %q, want one naming kyc.default_company_level", warnings)
		}
		if _, warnings, _ := loadConfig(configFlags{}, nil); len(warnings) != 0 {
			t.Fatalf("defaults warn: %q", warnings)
		}
	})
	t.Run("CallbackURLPrivateAllowed", func(t *testing.T) {
		text := "[kyc]\ncallback_url = \"https://10.0.0.1/hook\"\n[dispatch]\nallow_private_networks = true\n"
		if _, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("AssetDecimalsZero", func(t *testing.T) {
		text := "[[assets]]\nsymbol = \"PTS\"\nnetwork = \"x\"\ndecimals = 0\nusd_price = \"0.5\"\nnetwork_fee = \"1\"\n"
		if _, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("OK", func(t *testing.T) {
		text := "[[assets]]\nsymbol = \"X\"\nnetwork = \"x\"\ndecimals = 2\nnetwork_fee = \"0.010\"\nusd_price = \"1.5\"\n" +
			"[kyc]\ncallback_url = \"http://localhost:9000/kyc\"\n" +
			"[[levels]]\nname = \"crypto-kyc\"\nsteps = [{kind = \"identity_doc\"}, {kind = \"aml\"}]\npersonal_info_fields = [\"firstName\"]\n"
		if _, _, err := loadConfig(configFlags{path: writeConfig(t, text)}, nil); err != nil {
			t.Fatal(err)
		}
	})
}

func TestPublicURLFor(t *testing.T) {
	t.Parallel()
	addr := func(s string) net.Addr {
		a, err := net.ResolveTCPAddr("tcp", s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tc := range []struct{ publicURL, listen, bound, want string }{
		{"", "127.0.0.1:0", "127.0.0.1:43211", "http://127.0.0.1:43211"},
		{"", "0.0.0.0:8080", "0.0.0.0:8080", "http://127.0.0.1:8080"},
		{"", "[::]:8080", "[::]:8080", "http://[::1]:8080"},
		{"", ":8080", "[::]:8080", "http://127.0.0.1:8080"},        // every address, IPv4 too
		{"", "0.0.0.0:8080", "[::]:8080", "http://127.0.0.1:8080"}, // what a dual-stack listener reports
		{"", "0.0.0.0:0", "[::]:43211", "http://127.0.0.1:43211"},
		{"https://kyc.example.com/", "127.0.0.1:8080", "127.0.0.1:8080", "https://kyc.example.com"},
	} {
		c := DefaultConfig()
		c.PublicURL, c.Listen = tc.publicURL, tc.listen
		if got := c.publicURLFor(addr(tc.bound)); got != tc.want {
			t.Errorf("publicURLFor(%q, %s) = %s, want %s", tc.publicURL, tc.bound, got, tc.want)
		}
	}
}

// TestPublicURLForListener derives links from what a real listener
// reports: on a dual-stack host one bound to 0.0.0.0 says [::].
func TestPublicURLForListener(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ listen, want string }{
		{"0.0.0.0:0", "http://127.0.0.1:"},
		{":0", "http://127.0.0.1:"},
		{"127.0.0.1:0", "http://127.0.0.1:"},
	} {
		ln, err := net.Listen("tcp", tc.listen)
		if err != nil {
			t.Fatal(err)
		}
		bound := ln.Addr()
		ln.Close()
		_, port, _ := net.SplitHostPort(bound.String())
		c := DefaultConfig()
		c.Listen = tc.listen
		if got := c.publicURLFor(bound); got != tc.want+port {
			t.Errorf("listen %s, bound %s: publicURLFor = %s, want %s", tc.listen, bound, got, tc.want+port)
		}
	}
}

func TestREADMEDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	for _, k := range c.envKeys() {
		if !strings.Contains(string(b), "`"+k.name+"`") || !strings.Contains(string(b), "`"+k.env+"`") {
			t.Errorf("README.md's configuration table lacks %s / %s", k.name, k.env)
		}
	}
}

// TestAssetDecimalsChange: balances and amounts are kept in base units of
// an asset's decimals, so a restart with other decimals for an asset the db
// holds would rescale every one of them; start-up refuses it, naming the
// key. The other settings of the asset may change.
func TestAssetDecimalsChange(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	const ltc = "[[assets]]\nsymbol = \"LTC\"\nnetwork = \"litecoin\"\ndecimals = 8\nusd_price = \"70\"\nnetwork_fee = \"0.0001\"\n"
	s := startServe(t, db, "--config", writeConfig(t, "[chain]\nauto_advance = false\n"+ltc))
	key, secret := s.Key, s.Secret
	mustCall := func(url, method, path string, body any) map[string]any {
		t.Helper()
		status, b := call(t, method, url+path, key, secret, body)
		var out map[string]any
		if status/100 != 2 || json.Unmarshal(b, &out) != nil {
			t.Fatalf("%s %s: %d %s", method, path, status, b)
		}
		return out
	}
	vault := mustCall(s.URL, "POST", "/vaults", map[string]any{"name": "treasury"})["vaultId"].(string)
	wallet := mustCall(s.URL, "POST", "/vaults/"+vault+"/wallets", map[string]any{"assetSymbol": "BTC"})["walletId"].(string)
	tx := mustCall(s.URL, "POST", "/sandbox/deposits", map[string]any{"walletId": wallet, "amount": "1.5"})["transactionId"].(string)
	mustCall(s.URL, "POST", "/transactions/"+tx+"/advance", nil)
	if st := mustCall(s.URL, "POST", "/transactions/"+tx+"/advance", nil)["status"]; st != "Completed" {
		t.Fatalf("deposit %v after two advances, want Completed", st)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct{ name, text, key, stored string }{
		{"Replaced", ltc + "[[assets]]\nsymbol = \"btc\"\nnetwork = \"bitcoin\"\ndecimals = 2\nusd_price = \"65000\"\nnetwork_fee = \"0.01\"\n", "assets[1].decimals", "8"},
		{"Added", strings.Replace(ltc, "decimals = 8", "decimals = 6", 1), "assets[0].decimals", "8"},
	} {
		r := refusedStart(t, "serve", "--listen", "127.0.0.1:0", "--db", db, "--config", writeConfig(t, tc.text))
		wantErr(t, r.err(), tc.key, "decimals = "+tc.stored, "base units")
		if r.code != 1 {
			t.Errorf("%s: exit code %d, want 1", tc.name, r.code)
		}
	}

	// An entry dropped from the configuration brings back the built-in's
	// decimals: refused too.
	other := filepath.Join(t.TempDir(), "other.db")
	if err := startServe(t, other, "--config", writeConfig(t, "[[assets]]\nsymbol = \"BTC\"\nnetwork = \"bitcoin\"\ndecimals = 2\nusd_price = \"65000\"\nnetwork_fee = \"0.01\"\n")).stop(); err != nil {
		t.Fatal(err)
	}
	r := refusedStart(t, "serve", "--listen", "127.0.0.1:0", "--db", other)
	wantErr(t, r.err(), "[[assets]] entry for BTC with decimals = 2")

	// Price and fee may change; the balance is what was deposited.
	s = startServe(t, db, "--config", writeConfig(t, "[[assets]]\nsymbol = \"BTC\"\nnetwork = \"bitcoin\"\ndecimals = 8\nusd_price = \"70000\"\nnetwork_fee = \"0.0002\"\n"))
	if b := mustCall(s.URL, "GET", "/wallets/"+wallet+"/balance", nil); b["total"] != "1.5" || b["available"] != "1.5" {
		t.Fatalf("balance %v, want 1.5 deposited", b)
	}
	var assets struct{ Items []store.Asset }
	_, b := call(t, "GET", s.URL+"/assets", key, secret, nil)
	if err := json.Unmarshal(b, &assets); err != nil {
		t.Fatal(err)
	}
	for _, a := range assets.Items {
		if a.Symbol == "BTC" && (a.USDPrice != "70000" || a.NetworkFee != "0.0002" || a.Decimals != 8) {
			t.Fatalf("BTC %+v, want the new price and fee", a)
		}
		if a.Symbol == "LTC" && a.Decimals != 8 {
			t.Fatalf("LTC %+v: a symbol dropped from the configuration keeps its stored settings", a)
		}
	}
}

// refusedStart runs the command line in this process as runCmd does, but
// one that starts listening is stopped and fails the test.
func refusedStart(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out, errOut := newLineWriter(), newSyncBuffer()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, strings.NewReader(""), out, errOut, nil) }()
	for {
		select {
		case code := <-done:
			return result{stderr: errOut.String(), code: code}
		case line := <-out.lines:
			if strings.HasPrefix(line, "complybox listening on ") {
				cancel()
				<-done
				t.Fatalf("complybox %s started; want it refused", strings.Join(args, " "))
			}
		}
	}
}
