package console

import (
	"fmt"
	"strings"

	"github.com/complybox/complybox/store"
)

// The applicant page's automatic-check findings, in words: the latest run
// of the production checks (history review.check: images, age, duplicate
// selfie or document, sanctions, all recorded in one transaction at
// submission), with the images shared now that the run did not see (the
// other applicant uploaded it later), and the photo-quality problems
// measured at upload (history document.quality) of the documents still on
// record.

// finding is one automatic check's result as the page shows it.
type finding struct {
	Check, Result string
	Level         string // ok, warn, bad, info: the badge
	Title, Text   string
	Label         string // the reject label the check suggests, if any
	Other         string // the externalUserId of the applicant a duplicate shares an image with
	At            store.Time
	shared        string // a duplicate: sha256 | the other applicant's id
}

// findings reads the findings out of history (newest first) for the
// documents docs; shares are the images other applicants hold now.
func findings(history []store.HistoryEntry, docs []store.Document, shares []store.ImageShare) []finding {
	var out []finding
	var run store.Time
	for _, h := range history {
		if h.EventType != "review.check" {
			continue
		}
		if run.IsZero() {
			run = h.AtUtc
		}
		if !h.AtUtc.Equal(run.Time) {
			break // an earlier run
		}
		out = append(out, checkFinding(h))
	}
	// History is newest first; the run reads in the order it was recorded.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	if len(out) > 0 {
		out = laterShares(out, shares)
	}
	current := map[string]bool{}
	for _, d := range docs {
		current[d.SHA256] = true
	}
	seen := map[string]bool{}
	for _, h := range history {
		sha, _ := h.Details["sha256"].(string)
		if h.EventType != "document.quality" || !current[sha] || seen[sha] {
			continue
		}
		seen[sha] = true
		kind, _ := h.Details["kind"].(string)
		field, _ := h.Details["field"].(string)
		var problems []string
		if ps, ok := h.Details["problems"].([]any); ok {
			for _, p := range ps {
				problems = append(problems, humanize(fmt.Sprint(p)))
			}
		}
		out = append(out, finding{Check: "image_quality", Result: "warning", Level: "warn", At: h.AtUtc,
			Title: "Photo quality: " + humanizeKind(kind) + " (" + field + ")",
			Text:  strings.Join(problems, ", ") + ". Measured at upload; the applicant was asked to retake and may have continued anyway."})
	}
	return out
}

// humanizeKind is a step kind in words.
func humanizeKind(kind string) string {
	if n, ok := map[string]string{"identity_doc": "Identity document", "poa": "Proof of address", "company_docs": "Company documents",
		"aml": "AML screening", "adverse_media": "Media screening"}[kind]; ok {
		return n
	}
	return humanize(kind)
}

// checkFinding words one review.check entry.
func checkFinding(h store.HistoryEntry) finding {
	d := h.Details
	check, _ := d["check"].(string)
	result, _ := d["result"].(string)
	f := finding{Check: check, Result: result, Level: "info", At: h.AtUtc, Title: humanize(check), Text: humanize(result)}
	f.Label, _ = d["suggestedLabel"].(string)
	switch check + "/" + result {
	case "images/valid":
		f.Level, f.Title, f.Text = "ok", "Images", fmt.Sprintf("All %v documents decoded and valid.", d["documents"])
	case "age/ok":
		f.Level, f.Title, f.Text = "ok", "Age", fmt.Sprintf("%v years: 18 or older.", d["age"])
	case "age/under_18":
		f.Level, f.Title, f.Text = "bad", "Age", fmt.Sprintf("%v years: under 18.", d["age"])
	case "age/unknown":
		f.Level, f.Title, f.Text = "warn", "Age", "Unknown: no valid date of birth."
	case "duplicate/none":
		f.Level, f.Title, f.Text = "ok", "Duplicates", "No selfie or document image is used by another applicant."
	case "duplicate/match":
		f.Level, f.Title = "bad", "Duplicate "+humanizeKind(fmt.Sprint(d["kind"]))
		f.shared = fmt.Sprint(d["sha256"]) + "|" + fmt.Sprint(d["otherApplicantId"])
		if f.Other, _ = d["otherExternalUserId"].(string); f.Other != "" {
			f.Text = "The same image is used by applicant"
		} else { // recorded before the externalUserId was kept with the finding
			f.Text = fmt.Sprintf("The same image is used by applicant id %v.", d["otherApplicantId"])
		}
	case "sanctions/clear":
		f.Level, f.Title, f.Text = "ok", "Sanctions", "No match on the sanctions list."
	case "sanctions/match":
		f.Level, f.Title, f.Text = "bad", "Sanctions", fmt.Sprintf("The name matches the list entry %q.", d["entry"])
	case "sanctions/list_unavailable":
		f.Level, f.Title, f.Text = "warn", "Sanctions", "The sanctions list could not be read: screen by hand."
	case "sanctions/not_configured":
		f.Level, f.Title, f.Text = "info", "Sanctions", "No sanctions list is configured ([kyc] sanctions_file)."
	}
	return f
}

// laterShares adds to a run's findings a duplicate for each image shared
// now that the run did not report: another applicant uploaded it after
// this one's checks ran, so only a check of the other one found it. The
// run's "no duplicates" goes.
func laterShares(run []finding, shares []store.ImageShare) []finding {
	reported := map[string]bool{}
	for _, f := range run {
		reported[f.shared] = true
	}
	var later []finding
	for _, sh := range shares {
		if reported[sh.SHA256+"|"+sh.OtherApplicantID] {
			continue
		}
		f := finding{Check: "duplicate", Result: "match", Level: "bad", Title: "Duplicate " + humanizeKind(sh.Kind),
			Label: "DUPLICATE", Text: "Since the checks ran, the same image was uploaded by applicant", Other: sh.OtherExternalUserID}
		if f.Other == "" {
			f.Text = "Since the checks ran, the same image was uploaded by applicant id " + sh.OtherApplicantID + "."
		}
		later = append(later, f)
	}
	if len(later) == 0 {
		return run
	}
	out := run[:0:0]
	for _, f := range run {
		if f.Check != "duplicate" || f.Result != "none" {
			out = append(out, f)
		}
	}
	return append(out, later...)
}
