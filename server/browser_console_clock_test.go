package server_test

import (
	"testing"
	"time"
)

// TestBrowserConsoleClock: an operator moves the sandbox clock from the
// console in a browser — a one-click step, a typed duration, a UTC time,
// a typo refused beside its field — and sends test events of chosen
// catalog types from the settings page, landing on their deliveries. Every
// page passes axe-core at 1280 px and at 390 px, where nothing scrolls the
// page sideways; any console error or failed request fails the test.
func TestBrowserConsoleClock(t *testing.T) {
	t.Parallel()
	in := start(t)
	custody := newReceiver(t, in.Clock, func(int) int { return 500 })
	in.configureWebhook(custody)
	kyc, _ := in.kycReceiver()
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}

	tb := in.chrome(t, desktop)
	tb.consoleLogin("admin")
	tb.submit("nav a[href='/console/clock']")
	tb.contains("Sandbox clock", ms(testStart), "Lead over real time", "+1 hour", "+1 day", "+7 days")
	tb.a11y()
	tb.shot("console-clock-desktop")

	tb.submit("button[name=advanceBy][value='24h']")
	tb.contains("Moved", "From "+ms(testStart)+" to "+ms(testStart.Add(24*time.Hour)), "Jobs run, by kind", "retention")
	tb.a11y()

	tb.fill("#clock-by", "2d")
	tb.expectError("status of 400")
	tb.submit("#clock-by ~ button[type=submit]")
	tb.contains("advanceBy must be a duration", "(field advanceBy)")
	if !eval[bool](tb, `document.querySelector('#clock-by').getAttribute('aria-invalid') === 'true'`) {
		t.Error("the refused duration is not marked invalid")
	}
	tb.a11y()

	tb.fill("#clock-by", "36h")
	tb.submit("#clock-by ~ button[type=submit]")
	tb.contains("to " + ms(testStart.Add(60*time.Hour)))

	tb.fill("#clock-to", testStart.Add(72*time.Hour).Format("2006-01-02T15:04"))
	tb.submit("#clock-to ~ button[type=submit]")
	tb.contains("to " + ms(testStart.Add(72*time.Hour)))
	if c := in.clock(); c.Offset != "72h0m0s" {
		t.Fatalf("after the browser's moves the API reads %+v", c)
	}

	// Test events of a chosen type, from the settings page to the delivery.
	tb.open("/console/settings")
	tb.a11y()
	tb.fill("#custody-test-type", "transaction.status.updated")
	tb.submit("#custody-test-type ~ button[type=submit]")
	tb.contains("The test event is queued", "transaction.status.updated")
	tb.a11y()
	if got := custody.nextOfType(t, "transaction.status.updated"); got.Header.Get("X-Webhook-Test") != "true" {
		t.Errorf("X-Webhook-Test %q", got.Header.Get("X-Webhook-Test"))
	}
	// Its first attempt failed (the receiver answers 500): an hour on the
	// clock page makes the retries, and the delivery page shows it dead.
	delivery := eval[string](tb, `location.pathname`)
	tb.open("/console/clock")
	tb.submit("button[name=advanceBy][value='1h']")
	tb.contains("Moved")
	tb.open(delivery)
	tb.contains("dead")

	tb.open("/console/settings")
	tb.fill("#kyc-test-type", "applicantReviewed")
	tb.submit("#kyc-test-type ~ button[type=submit]")
	tb.contains("The test event is queued", "applicantReviewed")
	if got := kyc.nextOfType(t, "applicantReviewed"); got.Header.Get("X-Webhook-Test") != "true" {
		t.Errorf("KYC X-Webhook-Test %q", got.Header.Get("X-Webhook-Test"))
	}

	// At 390 px: the same pages fit, and the steps work by touch.
	ph := in.chrome(t, phone)
	ph.consoleLogin("admin")
	ph.open("/console/clock")
	ph.submit("button[name=advanceBy][value='1h']")
	ph.contains("Moved")
	for _, p := range []string{"", "/console/settings"} {
		if p != "" {
			ph.open(p)
		}
		if w := eval[int](ph, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s is %d px wide at a 390 px viewport", eval[string](ph, `location.pathname`), w)
		}
		ph.a11y()
	}
	ph.open("/console/clock")
	ph.shot("console-clock-phone")
}
