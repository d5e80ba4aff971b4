package hostedui

import (
	"net/http"
	"net/url"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/store"
)

// The intro: before the first step the applicant sees who asks (the
// partner's [branding]), what will be asked, in plain words derived from
// the level's steps, and a consent line to accept (a checkbox and a
// button: a plain form, no script). The hosted pages show the intro until
// consent is recorded (store.SDKConsent) and send the other form posts
// back to it; a session whose applicant consented before goes straight to
// the steps. The page API (/api/v1/sdk/) does not ask for consent: a
// partner that builds its own UI on it collects consent there.

// introAsk is one thing the intro says will be asked.
type introAsk struct {
	Key, Text string
}

// fillIntro lists what the steps of the navigation will ask, then the
// checks that run by themselves.
func (p *sdkPage) fillIntro() {
	for _, n := range p.Nav {
		key := n.Key
		switch {
		case key == "review":
			continue
		case key == "personal" && p.State.Applicant.Type == store.TypeCompany:
			key = "company"
		}
		p.Asks = append(p.Asks, introAsk{Key: n.Key, Text: p.T("ask." + key)})
	}
	for _, s := range p.State.Steps {
		if s.Automatic {
			p.Asks = append(p.Asks, introAsk{Key: s.Kind, Text: p.Ta("ask.screening")})
			break
		}
	}
}

// ConsentText is the consent line, naming the partner when [branding]
// names one.
func (p *sdkPage) ConsentText() string {
	if p.Brand != nil && p.Brand.Name != "" {
		return p.Taf("consent.named", p.Brand.Name)
	}
	return p.Ta("consent.text")
}

// PostConsent takes the intro's form: the box "consent" ticked records
// consent and leads to the first step; unticked, the intro again with the
// error (400 naming consent).
func (ui *UI) PostConsent(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	token := ps.ByName("token")
	if _, ok := ui.openForm(w, r, token, "intro"); !ok {
		return
	}
	if r.PostForm.Get("consent") == "" {
		ui.formError(w, r, token, "intro", store.Invalid("consent", "consent must be given to continue"), nil)
		return
	}
	st, err := ui.store.SDKConsent(token)
	if err != nil {
		ui.formError(w, r, token, "intro", err, nil)
		return
	}
	// On to the step the address asked for (a RETRY's "upload again"
	// link), else the first open step, also after a RETRY verdict (whose
	// page without ?step= is the verdict).
	requested := r.PostForm.Get("step")
	if requested == "" {
		requested = "intro"
	}
	target := "/sdk/" + url.PathEscape(token)
	if p := ui.build(token, st, requested); p.Mode == "step" {
		target += "?step=" + url.QueryEscape(p.Step)
	}
	sdkHeaders(w)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// consented reports whether the applicant of st gave consent; if not, it
// answers the form post with a redirect (303) to the page, which shows
// the intro: no data is taken before consent.
func consented(w http.ResponseWriter, r *http.Request, token string, st store.SDKState) bool {
	if !st.ConsentGivenAtUtc.IsZero() {
		return true
	}
	sdkHeaders(w)
	http.Redirect(w, r, "/sdk/"+url.PathEscape(token), http.StatusSeeOther)
	return false
}

// introMessages are the intro's words, merged into sdkMessages.
func introMessages() map[string]map[string]string {
	return map[string]map[string]string{
		"en": {
			"intro.title":       "Before you start",
			"intro.lead":        "To verify your identity we will ask you for:",
			"intro.lead.named":  "%s asks us to verify your identity. We will ask you for:",
			"intro.time":        "It takes about 5 minutes. Have your document at hand; you can use your camera or upload files.",
			"intro.start":       "Agree and start",
			"consent.text":      "I agree that my personal data, including photos of my face and my documents, are processed to verify my identity.",
			"consent.named":     "I agree that %s and its verification service process my personal data, including photos of my face and my documents, to verify my identity.",
			"field.consent":     "Consent",
			"err.consent":       "Please tick the box to agree before you continue.",
			"ask.personal":      "your personal details (name, date of birth and the like)",
			"ask.company":       "your company's details (name, registration number, country)",
			"ask.identity_doc":  "a photo of an identity document: passport, ID card, driving licence or residence permit, depending on the issuing country",
			"ask.selfie":        "a photo of your face (selfie)",
			"ask.liveness":      "a short liveness check: a few photos while you turn your head",
			"ask.poa":           "a proof of address, such as a utility bill or bank statement from the last three months",
			"ask.questionnaire": "answers to a few questions",
			"ask.company_docs":  "the company's documents, such as the certificate of incorporation",
			"ask.ubo":           "the company's beneficial owners, directors and representatives",
			"ask.screening":     "we also check your name against sanctions and watch lists; you do not need to do anything for this",
			// A company's words (sdkPage.Ta): the company is verified.
			"intro.lead.company":       "To verify your company we will ask you for:",
			"intro.lead.named.company": "%s asks us to verify your company. We will ask you for:",
			"intro.time.company":       "It takes about 5 minutes. Have your company's documents at hand; you can upload photos or PDF files.",
			"consent.text.company":     "I agree that the data I provide about my company and the people named in it, including the company's documents, are processed to verify my company.",
			"consent.named.company":    "I agree that %s and its verification service process the data I provide about my company and the people named in it, including the company's documents, to verify my company.",
			"ask.screening.company":    "we also check the company's name against sanctions and watch lists; you do not need to do anything for this",
			"intro.ubo_parent":         "You were invited to verify as a beneficial owner of %s.",
		},
		"de": {
			"intro.title":              "Bevor Sie beginnen",
			"intro.lead":               "Um Ihre Identität zu prüfen, bitten wir Sie um:",
			"intro.lead.named":         "%s bittet uns, Ihre Identität zu prüfen. Wir bitten Sie um:",
			"intro.time":               "Das dauert etwa 5 Minuten. Halten Sie Ihr Dokument bereit; Sie können die Kamera nutzen oder Dateien hochladen.",
			"intro.start":              "Zustimmen und beginnen",
			"consent.text":             "Ich bin einverstanden, dass meine personenbezogenen Daten, einschließlich Fotos meines Gesichts und meiner Dokumente, zur Prüfung meiner Identität verarbeitet werden.",
			"consent.named":            "Ich bin einverstanden, dass %s und sein Prüfdienst meine personenbezogenen Daten, einschließlich Fotos meines Gesichts und meiner Dokumente, zur Prüfung meiner Identität verarbeiten.",
			"field.consent":            "Einwilligung",
			"err.consent":              "Bitte setzen Sie das Häkchen, um zuzustimmen, bevor Sie fortfahren.",
			"ask.personal":             "Ihre persönlichen Angaben (Name, Geburtsdatum und Ähnliches)",
			"ask.company":              "die Angaben zu Ihrem Unternehmen (Name, Registernummer, Land)",
			"ask.identity_doc":         "ein Foto eines Ausweisdokuments: Reisepass, Personalausweis, Führerschein oder Aufenthaltstitel, je nach ausstellendem Land",
			"ask.selfie":               "ein Foto Ihres Gesichts (Selfie)",
			"ask.liveness":             "eine kurze Lebendigkeitsprüfung: einige Fotos, während Sie den Kopf drehen",
			"ask.poa":                  "einen Adressnachweis, etwa eine Rechnung oder einen Kontoauszug der letzten drei Monate",
			"ask.questionnaire":        "Antworten auf einige Fragen",
			"ask.company_docs":         "die Unterlagen des Unternehmens, etwa den Handelsregisterauszug",
			"ask.ubo":                  "die wirtschaftlich Berechtigten, Geschäftsführer und Vertreter des Unternehmens",
			"ask.screening":            "außerdem gleichen wir Ihren Namen mit Sanktions- und Warnlisten ab; dafür müssen Sie nichts tun",
			"intro.lead.company":       "Um Ihr Unternehmen zu prüfen, bitten wir Sie um:",
			"intro.lead.named.company": "%s bittet uns, Ihr Unternehmen zu prüfen. Wir bitten Sie um:",
			"intro.time.company":       "Das dauert etwa 5 Minuten. Halten Sie die Unterlagen Ihres Unternehmens bereit; Sie können Fotos oder PDF-Dateien hochladen.",
			"consent.text.company":     "Ich bin einverstanden, dass die Daten, die ich über mein Unternehmen und die darin genannten Personen angebe, einschließlich der Unterlagen des Unternehmens, zur Prüfung meines Unternehmens verarbeitet werden.",
			"consent.named.company":    "Ich bin einverstanden, dass %s und sein Prüfdienst die Daten, die ich über mein Unternehmen und die darin genannten Personen angebe, einschließlich der Unterlagen des Unternehmens, zur Prüfung meines Unternehmens verarbeiten.",
			"ask.screening.company":    "außerdem gleichen wir den Namen des Unternehmens mit Sanktions- und Warnlisten ab; dafür müssen Sie nichts tun",
			"intro.ubo_parent":         "Sie wurden eingeladen, sich als wirtschaftlich Berechtigte(r) von %s zu verifizieren.",
		},
	}
}

// consentGiven reads the session of token and reports whether its
// applicant gave consent; if not, or the session cannot be used, it
// answers the request itself (consented, fail).
func (ui *UI) consentGiven(w http.ResponseWriter, r *http.Request, token string) bool {
	st, err := ui.store.SDKView(token)
	if err != nil {
		ui.fail(w, r, err)
		return false
	}
	return consented(w, r, token, st)
}
