package store

import (
	"slices"
	"strings"
)

// Identity document types by issuing country: the one table the hosted
// UI's picker offers from and every write checks against (POST …/verify,
// POST …/documents with a country, hosted-UI uploads). The country is
// the one that issued the document (ISO 3166-1 alpha-3), not the
// holder's nationality. The rules, as the vendors' supported-document
// lists have them:
//   - PASSPORT and DRIVERS: every country issues them.
//   - ID_CARD: countries that issue a national identity card: every
//     EU/EEA member and Switzerland, the other European states with one,
//     and the countries elsewhere whose card is the usual identity
//     document, among them the USA (state ID cards), Canada (provincial
//     photo cards), Japan (My Number Card) and India (Aadhaar), which
//     the vendors list as ID cards. Not, for example, the UK, Australia
//     or New Zealand, where a person identifies with a passport or a
//     driving licence.
//   - RESIDENCE_PERMIT: countries that issue a residence card to
//     foreigners (EU/EEA and Switzerland under the EU format, the UK, the
//     USA, Canada, Japan and a few more).

// idCardCountries issue national identity cards.
const idCardCountries = euEEA + " CHE" +
	" ALB AND BIH GEO MCO MDA MKD MNE SMR SRB TUR UKR ARM AZE BLR KAZ KGZ RUS TJK UZB" +
	" ARG BOL BRA CHL COL CRI DOM ECU GTM HND MEX NIC PAN PER PRY SLV URY VEN" +
	" CHN HKG MAC TWN KOR IDN MYS PHL SGP THA VNM LKA PAK BGD" +
	" ARE BHR EGY IRN IRQ ISR JOR KWT LBN MAR OMN QAT SAU TUN DZA" +
	" ZAF NGA GHA KEN RWA SEN CIV CMR UGA" +
	" USA CAN JPN IND"

// residencePermitCountries issue residence permits as cards.
const residencePermitCountries = euEEA + " CHE GBR USA CAN JPN KOR SGP HKG ARE SAU QAT TUR AUS NZL"

// euEEA are the members of the EU and the EEA.
const euEEA = "AUT BEL BGR HRV CYP CZE DNK EST FIN FRA DEU GRC HUN IRL ITA LVA LTU LUX MLT NLD POL PRT ROU SVK SVN ESP SWE ISL LIE NOR"

// IDDocTypesFor lists the identity document types a country issues, in
// the order of IDDocTypes; nil for a code that is not a country.
func IDDocTypesFor(country string) []string {
	if !IsCountry(country) {
		return nil
	}
	out := []string{"PASSPORT"}
	if slices.Contains(strings.Fields(idCardCountries), country) {
		out = append(out, "ID_CARD")
	}
	out = append(out, "DRIVERS")
	if slices.Contains(strings.Fields(residencePermitCountries), country) {
		out = append(out, "RESIDENCE_PERMIT")
	}
	return out
}

// IDDocTypeCountries lists, by document type, the countries that issue
// it; nil for a type every country issues (the hosted page's script
// filters its list with it).
func IDDocTypeCountries() map[string][]string {
	return map[string][]string{"PASSPORT": nil, "DRIVERS": nil,
		"ID_CARD": strings.Fields(idCardCountries), "RESIDENCE_PERMIT": strings.Fields(residencePermitCountries)}
}

// checkIDDocument checks an identity document's type and issuing country:
// a country (when given, or when required) must be an ISO alpha-3 code,
// and the type one that country issues. Returns EINVALID naming
// countryField or typeField.
func checkIDDocument(typeField, docType, countryField, country string, countryRequired bool) error {
	if country == "" && !countryRequired {
		return nil
	}
	if !IsCountry(country) {
		return Invalid(countryField, "%s must be the issuing country as an ISO 3166-1 alpha-3 code in upper case, e.g. DEU", countryField)
	}
	if docType == "" {
		return nil
	}
	if valid := IDDocTypesFor(country); !slices.Contains(valid, docType) {
		return Invalid(typeField, "%s %s is not issued by %s; %s issues %s", typeField, docType, country, country, strings.Join(valid, ", "))
	}
	return nil
}
