package console

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// The console shows codes in words: reject labels, history event types,
// review statuses. The codes stay visible where an operator needs them
// (titles, the API), the words are what they read.

// eventNames are the history event types in words.
func eventNames() map[string]string {
	return map[string]string{
		"applicant.created":               "Applicant created",
		"applicant.updated":               "Data updated",
		"applicant.reset":                 "Applicant reset",
		"applicant.sent_to_review":        "Sent to review",
		"applicant.approved":              "Approved",
		"applicant.rejected":              "Rejected",
		"applicant.verified":              "Verified",
		"applicant.activated":             "Activated",
		"applicant.deactivated":           "Deactivated",
		"applicant.blocklisted":           "Blocklisted",
		"applicant.blocklist_removed":     "Removed from the blocklist",
		"applicant.monitoring_enabled":    "Monitoring enabled",
		"applicant.monitoring_disabled":   "Monitoring disabled",
		"applicant.erased":                "Personal data erased",
		"applicant.email_status_sent":     "Status email sent",
		"enrollment.created":              "Verification link created",
		"enrollment.submitted":            "Submitted",
		"enrollment.completed":            "Verification completed",
		"enrollment.expired":              "Verification link expired",
		"aml.run":                         "AML screening run",
		"adverse_media.run":               "Media screening run",
		"review.check":                    "Automatic check",
		"review.on_hold":                  "On hold for an operator",
		"managed_compliance.decided":      "Operator decision",
		"sdk.state_read":                  "Hosted page opened",
		"consent.given":                   "Consent given",
		"document.added":                  "Document added",
		"document.quality":                "Photo quality warning",
		"sdk.personal_info_unchanged":     "Personal data saved unchanged",
		"sdk.call_refused":                "Hosted page input refused",
		"ubo.added":                       "Beneficial owner added",
		"ubo.updated":                     "Beneficial owner updated",
		"ubo.spawned":                     "Beneficial owner invited",
		"ubo.link_regenerated":            "Beneficial owner link renewed",
		"console.login":                   "Console login",
		"console.login_failed":            "Console login failed",
		"console.logout":                  "Console logout",
		"console.password_set":            "Console password set",
		"console.password_migrated":       "Console password became the admin account",
		"console.operator_added":          "Operator added",
		"console.operator_removed":        "Operator removed",
		"console.operator_role_changed":   "Operator role changed",
		"console.decided":                 "Decided in the console",
		"console.callback_secret_rotated": "Callback secret rotated",
		"console.callback_configured":     "Callback URL saved",
		"console.webhook_configured":      "Custody webhook saved",
		"console.webhook_secret_rotated":  "Webhook secret rotated",
		"console.level_created":           "Level created",
		"console.level_edited":            "Level edited",
		"console.credential_created":      "Credential created",
		"console.credential_revoked":      "Credential revoked",
		"console.delivery_retried":        "Delivery retried",
		"console.deliveries_retried":      "Deliveries retried",
		"console.sandbox_clock_moved":     "Sandbox clock moved",
		"console.test_event_sent":         "Test event sent",
		"level.created":                   "Level created",
		"level.updated":                   "Level updated",
	}
}

// eventName is an event type in words; an unknown type is its code with
// spaces ("ubo.child_completed" → "Ubo child completed").
func (c *Console) eventName(eventType string) string {
	if n, ok := c.events[eventType]; ok {
		return n
	}
	return humanize(strings.ReplaceAll(eventType, ".", " "))
}

// humanize writes a code in words: "SELFIE_MISMATCH" → "Selfie mismatch";
// abbreviations stay capitals ("ID_INVALID" → "ID invalid", "PEP").
func humanize(code string) string {
	words := strings.Fields(strings.ToLower(strings.ReplaceAll(code, "_", " ")))
	for i, w := range words {
		switch w {
		case "id", "pep", "aml", "kyc", "kyb", "ubo", "url", "usd", "poa":
			words[i] = strings.ToUpper(w)
		}
	}
	s := strings.Join(words, " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// detail is one key and value of a history entry's details.
type detail struct {
	Key, Value string
}

// details lists a history entry's details as words: keys in order, values
// as text (lists joined with commas).
func details(v any) []detail {
	m, ok := v.(map[string]any)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil || string(b) == "null" || string(b) == "{}" {
			return nil
		}
		if json.Unmarshal(b, &m) != nil {
			return []detail{{Value: string(b)}}
		}
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []detail
	for _, k := range keys {
		out = append(out, detail{Key: k, Value: detailValue(m[k])})
	}
	return out
}

func detailValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "—"
	case string:
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = detailValue(e)
		}
		return strings.Join(parts, ", ")
	case []string:
		return strings.Join(x, ", ")
	case bool, float64, int, int64:
		return fmt.Sprint(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
