package store

import "strings"

// CountryCodes lists the ISO 3166-1 alpha-3 codes IsCountry accepts, for
// the hosted UI's country pickers.
func CountryCodes() []string { return strings.Fields(countryCodes) }
