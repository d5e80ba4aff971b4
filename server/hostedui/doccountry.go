package hostedui

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/complybox/complybox/store"
)

// The identity-document step asks the issuing country first, then offers
// only the document types that country issues (store.IDDocTypesFor, the
// one table; the store refuses any other type naming docType). Without
// script it is two pages: the country (a GET form to the page with
// ?country=), then the upload form with the country's types and a button
// that shows the types of another country picked there; with script the
// type list follows the country select at once (app.js reads the table
// from the form's data-doctypes) and that button is gone.

// docTypeEntry is one identity document type of the script's table.
type docTypeEntry struct {
	Value     string   `json:"value"`
	Label     string   `json:"label"`
	Countries []string `json:"countries"` // null: every country
}

// pickDocCountry sets the identity document's issuing country (an
// upper-case ISO alpha-3 code; anything else is ignored) and the types
// the page offers for it.
func (p *sdkPage) pickDocCountry(code string) {
	code = strings.ToUpper(strings.TrimSpace(code))
	types := store.IDDocTypesFor(code)
	if types == nil {
		return
	}
	p.DocCountry, p.IDDocTypes = code, nil
	for _, t := range types {
		p.IDDocTypes = append(p.IDDocTypes, sdkOption{Value: t, Label: p.T("doc." + t)})
	}
}

// fillDocCountry prepares the identity-document step: the country of the
// identity document uploaded before (a retake keeps it), and the
// country the picker starts on: that one, else the applicant's
// nationality.
func (p *sdkPage) fillDocCountry() {
	for _, d := range p.State.Documents {
		if d.Kind == store.StepIdentityDoc && d.Country != "" {
			p.pickDocCountry(string(d.Country))
			p.DocCountryGuess, p.DocType = string(d.Country), string(d.DocType)
			return
		}
	}
	for _, f := range p.State.Fields {
		if f.Name == "nationality" && f.Value != nil {
			p.DocCountryGuess = *f.Value
		}
	}
}

// readDocCountry reads the country the first form chose (?country=), and
// the document type of an upload form sent back with an error.
func (p *sdkPage) readDocCountry(q url.Values) {
	if c := q.Get("country"); c != "" && p.Step == store.StepIdentityDoc {
		p.pickDocCountry(c)
	}
	if t := q.Get("docType"); t != "" && p.Step == store.StepIdentityDoc {
		p.DocType = t
	}
}

// DocTypeTable is the script's table of identity document types: each
// type with its label and the countries that issue it.
func (p *sdkPage) DocTypeTable() string {
	byType := store.IDDocTypeCountries()
	var out []docTypeEntry
	for _, t := range store.IDDocTypes() {
		out = append(out, docTypeEntry{Value: t, Label: p.T("doc." + t), Countries: byType[t]})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// docCountryMessages are the picker's words, merged into sdkMessages.
func docCountryMessages() map[string]map[string]string {
	return map[string]map[string]string{
		"en": {
			"doc.country":        "Issuing country",
			"doc.country.hint":   "The country that issued your document.",
			"doc.country.update": "Show document types for this country",
			"field.country.doc":  "Issuing country",
			"field.docType":      "Document type",
			"err.doctype":        "This type of document is not issued by the chosen country. Please choose one from the list.",
		},
		"de": {
			"doc.country":        "Ausstellendes Land",
			"doc.country.hint":   "Das Land, das Ihr Dokument ausgestellt hat.",
			"doc.country.update": "Dokumentarten für dieses Land anzeigen",
			"field.country.doc":  "Ausstellendes Land",
			"field.docType":      "Dokumentart",
			"err.doctype":        "Diese Dokumentart wird von dem gewählten Land nicht ausgestellt. Bitte wählen Sie eine aus der Liste.",
		},
	}
}
