package store

import (
	"encoding/json"
	"net/mail"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Applicant types.
const (
	TypeIndividual = "individual"
	TypeCompany    = "company"
)

// individualFields are the personal fields of seed 2.1, in display order.
func individualFields() []string {
	return []string{"firstName", "lastName", "middleName", "dateOfBirth", "gender", "nationality", "address", "email", "phone"}
}

// companyFields are the company fields of seed 2.1, in display order.
func companyFields() []string {
	return []string{"companyName", "registrationNumber", "legalForm", "incorporationDate", "registeredAddress", "country", "email", "phone"}
}

// fieldsOf returns the data fields an applicant of type typ can carry.
func fieldsOf(typ string) []string {
	if typ == TypeCompany {
		return companyFields()
	}
	return individualFields()
}

func inList(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// legalForms are the accepted values of legalForm, lower case.
func legalForms() []string {
	return []string{"llc", "ltd", "plc", "gmbh", "ag", "sa", "sarl", "bv", "nv", "inc", "corp", "lp", "llp",
		"partnership", "sole_proprietorship", "foundation", "trust", "other"}
}

// countryCodes is ISO 3166-1 alpha-3: the 249 officially assigned codes.
const countryCodes = "AFG ALA ALB DZA ASM AND AGO AIA ATA ATG ARG ARM ABW AUS AUT AZE BHS BHR BGD BRB BLR BEL BLZ BEN " +
	"BMU BTN BOL BES BIH BWA BVT BRA IOT BRN BGR BFA BDI CPV KHM CMR CAN CYM CAF TCD CHL CHN CXR CCK COL COM " +
	"COG COD COK CRI CIV HRV CUB CUW CYP CZE DNK DJI DMA DOM ECU EGY SLV GNQ ERI EST SWZ ETH FLK FRO FJI FIN " +
	"FRA GUF PYF ATF GAB GMB GEO DEU GHA GIB GRC GRL GRD GLP GUM GTM GGY GIN GNB GUY HTI HMD VAT HND HKG HUN " +
	"ISL IND IDN IRN IRQ IRL IMN ISR ITA JAM JPN JEY JOR KAZ KEN KIR PRK KOR KWT KGZ LAO LVA LBN LSO LBR LBY " +
	"LIE LTU LUX MAC MDG MWI MYS MDV MLI MLT MHL MTQ MRT MUS MYT MEX FSM MDA MCO MNG MNE MSR MAR MOZ MMR NAM " +
	"NRU NPL NLD NCL NZL NIC NER NGA NIU NFK MKD MNP NOR OMN PAK PLW PSE PAN PNG PRY PER PHL PCN POL PRT PRI " +
	"QAT REU ROU RUS RWA BLM SHN KNA LCA MAF SPM VCT WSM SMR STP SAU SEN SRB SYC SLE SGP SXM SVK SVN SLB SOM " +
	"ZAF SGS SSD ESP LKA SDN SUR SJM SWE CHE SYR TWN TJK TZA THA TLS TGO TKL TON TTO TUN TUR TKM TCA TUV UGA " +
	"UKR ARE GBR USA UMI URY UZB VUT VEN VNM VGB VIR WLF ESH YEM ZMB ZWE"

// IsCountry reports whether s is an ISO 3166-1 alpha-3 code in upper case.
func IsCountry(s string) bool {
	if len(s) != 3 || strings.ToUpper(s) != s {
		return false
	}
	i := strings.Index(countryCodes, s)
	return i >= 0 && i%4 == 0
}

// CountryCodes lists the ISO 3166-1 alpha-3 codes IsCountry accepts, for
// the hosted UI's country pickers.
func CountryCodes() []string { return strings.Fields(countryCodes) }

// CountryCount returns how many country codes are known (249).
func CountryCount() int { return len(strings.Fields(countryCodes)) }

// validExternalUserID reports whether id is 1–100 characters of A-Za-z0-9._:@-.
func validExternalUserID(id string) bool {
	if len(id) == 0 || len(id) > 100 {
		return false
	}
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == ':' || c == '@' || c == '-':
		default:
			return false
		}
	}
	return true
}

// childExternalUserID reports whether id has the form of a spawned child's
// externalUserId, {parent}.ubo.{n} (SPEC §3.6), with a valid parent id:
// such an id can run over the 100 characters of a new applicant's.
func childExternalUserID(id string) bool {
	i := strings.LastIndex(id, ".ubo.")
	if i < 0 {
		return false
	}
	parent, n := id[:i], id[i+len(".ubo."):]
	if n == "" || len(n) > 3 || !validExternalUserID(parent) {
		return false
	}
	for _, c := range n {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validDate parses a YYYY-MM-DD calendar date.
func validDate(s string) (time.Time, bool) {
	if len(s) != 10 {
		return time.Time{}, false
	}
	d, err := time.Parse("2006-01-02", s)
	return d, err == nil
}

// normalizeField checks the value of data field name and returns it in its
// stored form. Returns EINVALID naming the field.
func normalizeField(name, v string, now time.Time) (string, error) {
	if strings.TrimSpace(v) == "" {
		return "", Invalid(name, "%s must not be empty; send null to clear it", name)
	}
	if err := checkControl(name, v, name == "address" || name == "registeredAddress"); err != nil {
		return "", err
	}
	switch name {
	case "gender":
		if v != "male" && v != "female" && v != "other" {
			return "", Invalid(name, "gender must be male, female or other")
		}
	case "nationality", "country":
		if !IsCountry(v) {
			return "", Invalid(name, "%s must be an ISO 3166-1 alpha-3 code in upper case, e.g. DEU", name)
		}
	case "legalForm":
		l := strings.ToLower(v)
		if !inList(legalForms(), l) {
			return "", Invalid(name, "legalForm must be one of %s", strings.Join(legalForms(), ", "))
		}
		return l, nil
	case "dateOfBirth", "incorporationDate":
		d, ok := validDate(v)
		if !ok {
			return "", Invalid(name, "%s must be a calendar date YYYY-MM-DD", name)
		}
		if d.After(now) {
			return "", Invalid(name, "%s must not be in the future", name)
		}
		if d.Year() < 1850 {
			return "", Invalid(name, "%s is implausibly early", name)
		}
	case "email":
		a, err := mail.ParseAddress(v)
		if err != nil || a.Address != v || len(v) > 254 || !isASCII(v) || !hostName(v[strings.LastIndex(v, "@")+1:]) {
			return "", Invalid(name, "email must be an address like name@example.com (ASCII, as JSON Schema's email format: an internationalised domain in its xn-- form)")
		}
	case "phone":
		digits := 0
		for i, c := range v {
			switch {
			case c >= '0' && c <= '9':
				digits++
			case c == '+' && i == 0, c == ' ', c == '-', c == '(', c == ')', c == '.':
			default:
				return "", Invalid(name, "phone must be a number like +49 30 1234567")
			}
		}
		if digits < 6 || digits > 15 {
			return "", Invalid(name, "phone must have 6 to 15 digits")
		}
	case "address", "registeredAddress":
		if longerThan(v, 500) {
			return "", Invalid(name, "%s must be at most 500 characters", name)
		}
	default:
		if longerThan(v, 200) {
			return "", Invalid(name, "%s must be at most 200 characters", name)
		}
	}
	return v, nil
}

// longerThan reports whether s has more than max characters. Limits are
// in characters (code points, as JSON Schema's maxLength counts them),
// never in bytes: "é" is one character and two bytes.
func longerThan(s string, max int) bool { return utf8.RuneCountInString(s) > max }

// checkControl refuses a value of field name with a control character
// (C0, DEL or C1: unicode.IsControl); multiline text (a comment, an
// answer) allows line breaks and tabs. Returns EINVALID naming the field.
func checkControl(name, v string, multiline bool) error {
	for _, r := range v {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\r' || r == '\t')) {
			return Invalid(name, "%s contains a control character", name)
		}
	}
	return nil
}

// jsonString decodes raw as a JSON string. null gives ok=false, err=nil.
// Returns EINVALID naming field for any other type.
func jsonString(field string, raw json.RawMessage) (string, bool, error) {
	if isNull(raw) {
		return "", false, nil
	}
	if s, ok := plainJSONString(raw); ok {
		return s, true, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, Invalid(field, "%s must be a string", field)
	}
	return s, true, nil
}

// plainJSONString returns the string raw holds when it is a JSON string
// with nothing to decode (no escape, valid UTF-8): what json.Unmarshal
// would return, without its reflection.
func plainJSONString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	in := raw[1 : len(raw)-1]
	for _, c := range in {
		if c < 0x20 || c == '"' || c == '\\' {
			return "", false
		}
	}
	if !utf8.Valid(in) {
		return "", false
	}
	return string(in), true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// checkReturnURL checks an absolute http(s) URL.
func checkReturnURL(field, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return Invalid(field, "%s must be an absolute http(s) URL", field)
	}
	return nil
}

// validLang reports whether s is a two-letter language code.
func validLang(s string) bool {
	return len(s) == 2 && s[0] >= 'a' && s[0] <= 'z' && s[1] >= 'a' && s[1] <= 'z'
}

// hostName reports whether s is a domain name of two labels or more, each
// 1-63 letters, digits and hyphens of ASCII, not starting or ending with a
// hyphen (RFC 1123): the domain of an email address as JSON Schema's
// email format, and so every client validating against the document,
// takes it. The local part is ASCII too: net/mail's dot-atom, checked
// by its caller.
func hostName(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 || len(s) > 253 {
		return false
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isASCII reports whether s holds only ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
