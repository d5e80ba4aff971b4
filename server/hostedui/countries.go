package hostedui

import (
	"sort"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/complybox/complybox/store"
)

// countryOptions lists every ISO 3166-1 alpha-3 code (the value posted)
// by its name in lang, in that language's alphabetical order (Ö with O in
// German). Built once per language by New; pages copy it.
func countryOptions(lang string) []sdkOption {
	tag := language.English
	if lang == "de" {
		tag = language.German
	}
	names := display.Regions(tag)
	var out []sdkOption
	for _, code := range store.CountryCodes() {
		label := code
		if r, err := language.ParseRegion(code); err == nil {
			if n := names.Name(r); n != "" {
				label = n
			}
		}
		out = append(out, sdkOption{Value: code, Label: label})
	}
	col := collate.New(tag, collate.Loose)
	sort.SliceStable(out, func(i, j int) bool { return col.CompareString(out[i].Label, out[j].Label) < 0 })
	return out
}

// CountryName is the English name of an ISO 3166-1 alpha-3 code (the
// console's language), or the code itself when it names no region.
func CountryName(code string) string {
	if r, err := language.ParseRegion(code); err == nil {
		if n := display.Regions(language.English).Name(r); n != "" {
			return n
		}
	}
	return code
}
