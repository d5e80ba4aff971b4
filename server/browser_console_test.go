package server_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/complybox/complybox/store"
)

// Browser tests of the console (SPEC §3.9): an operator on a laptop.

// TestBrowserConsoleDecision: log in as a reviewer (no admin pages in
// the navigation, 403 on settings), find the applicant the sandbox
// reviewer held for an operator (MANUAL), zoom a document, reject with a
// label (refused first without one), see the verdict and the
// applicantReviewed webhook among the deliveries. A form posted without
// its CSRF token is refused. Every page passes axe-core, at 1280 px and at
// 390 px without the page scrolling sideways.
func TestBrowserConsoleDecision(t *testing.T) {
	t.Parallel()
	in := start(t)
	rc, _ := in.kycReceiver()
	in.createApplicant("held-1", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/held-1/verify", verifyBody(t, 81))
	in.createApplicant("held-2", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/held-2/verify", verifyBody(t, 82))
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Store.AddConsoleUser("rita", store.ConsoleReviewer, consolePassword, store.ConsoleCLIActor); err != nil {
		t.Fatal(err)
	}

	tb := in.chrome(t, desktop)
	tb.open("/console")
	tb.contains("Log in")
	tb.a11y()
	tb.fill("input[name=name]", "rita")
	tb.fill("input[name=password]", consolePassword)
	tb.submit("form[action='/console/login'] button[type=submit]")
	tb.contains("Overview", "rita")
	if eval[bool](tb, `!!document.querySelector('nav a[href="/console/settings"], nav a[href="/console/operators"]')`) {
		t.Error("a reviewer's navigation links admin pages")
	}

	tb.open("/console/applicants?reviewStatus=awaitingOperatorReview")
	tb.contains("held-1")
	tb.a11y()
	tb.submit("a[href='/console/applicants/held-1']")
	tb.contains("Decision", "Documents", "On hold for an operator")
	tb.a11y()
	tb.shot("console-applicant-desktop")
	// The decision form comes after the documents in the page and beside
	// them at this width.
	if !eval[bool](tb, `document.querySelector('.evidence').compareDocumentPosition(document.querySelector('#decision')) & Node.DOCUMENT_POSITION_FOLLOWING ? true : false`) {
		t.Error("the decision form comes before the documents")
	}
	if !eval[bool](tb, `document.querySelector('#decision').getBoundingClientRect().left > document.querySelector('.evidence').getBoundingClientRect().right - 1`) {
		t.Error("the decision form is not beside the documents at 1280 px")
	}
	// No table cell breaks a word.
	if broken := eval[string](tb, `Array.from(document.querySelectorAll('td .badge, td code, td time')).filter(e => e.getClientRects().length > 1).map(e => e.textContent).join(', ')`); broken != "" {
		t.Errorf("codes broken across lines: %s", broken)
	}

	// Rotate: a quarter turn at a time.
	tb.click("button.rotate")
	if tr := eval[string](tb, `getComputedStyle(document.querySelector('.docs img')).transform`); tr == "none" {
		t.Error("the rotate button did not turn the document")
	}
	tb.a11y()

	// Zoom: the document opens at full size.
	href := eval[string](tb, `document.querySelector('a.zoom').href`)
	tb.submit("a.zoom")
	if w := eval[int](tb, `document.images[0] ? document.images[0].naturalWidth : 0`); w < 200 {
		t.Fatalf("zoomed document %s is %d px wide", href, w)
	}
	tb.open("/console/applicants/held-1")

	// RED FINAL without a label: refused, the form kept.
	tb.click("input[name=reviewAnswer][value=RED]")
	tb.click("input[name=confirmFinal]")
	tb.expectError("status of 400")
	tb.submit("#decision button[type=submit]")
	tb.contains("Choose at least one reject label")
	if !eval[bool](tb, `document.querySelector('input[name=reviewAnswer][value=RED]').checked`) {
		t.Error("the refused form lost the verdict")
	}
	tb.click("input[name=rejectLabels][value=FORGERY]")
	tb.click("input[name=confirmFinal]")
	tb.submit("#decision button[type=submit]")
	tb.contains("The decision was recorded.", "RED", "FINAL", "Forgery", "The document appears to have been altered or forged.")
	tb.a11y()
	if w := eval[[]int](tb, `(() => { const b = document.querySelector('#steps'); return [b.scrollWidth, b.clientWidth] })()`); w[0] > w[1] {
		t.Errorf("at 1280 px the decided steps table is %d px wide in a %d px box: it scrolls sideways", w[0], w[1])
	}

	got := rc.nextOfType(t, "applicantReviewed")
	if !strings.Contains(string(got.Body), `"FORGERY"`) {
		t.Fatalf("applicantReviewed %s", got.Body)
	}
	tb.open("/console/deliveries")
	tb.contains("applicantReviewed")
	tb.a11y()
	tb.shot("console-deliveries-desktop")

	// A reviewer does not reach the settings.
	tb.expectError("status of 403")
	tb.open("/console/settings")
	tb.contains("for admins")

	// A form without its CSRF token: refused.
	tb.open("/console/deliveries")
	tb.run(chromedpRemove("form[action='/console/env'] input[name=csrf]"))
	tb.expectError("status of 403")
	tb.submit("form[action='/console/env'] button[type=submit]")
	tb.contains("security token")

	// At 390 px the console still fits: nothing scrolls the page sideways.
	ph := in.chrome(t, phone)
	ph.consoleLogin("admin")
	for _, p := range []string{"/console", "/console/applicants", "/console/applicants/held-1", "/console/deliveries", "/console/operators"} {
		ph.open(p)
		if w := eval[int](ph, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("%s is %d px wide at a 390 px viewport; widest: %s", p, w, eval[string](ph, `Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > 391 && !e.closest('.scroll')).slice(0, 5).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')`))
		}
		// Every value of a details list is wide enough to read (a long
		// key once squeezed its value to 0 px and a column of letters).
		if narrow := eval[string](ph, `Array.from(document.querySelectorAll('dl.details dd')).filter(d => d.textContent.trim() && d.getBoundingClientRect().width < 80).map(d => Math.round(d.getBoundingClientRect().width) + 'px ' + d.textContent.trim().slice(0, 30)).join('; ')`); narrow != "" {
			t.Errorf("%s: details values too narrow to read: %s", p, narrow)
		}
		ph.a11y()
	}
	ph.open("/console/applicants/held-1")
	ph.shot("console-applicant-phone")

	// A refused decision on a phone: the page comes back where its error
	// is, 2,000 px and more below the top, not at the top where nothing
	// says it failed; and the address it leaves in the bar opens the
	// applicant again, not a 405.
	ph.open("/console/applicants/held-2")
	ph.click("input[name=reviewAnswer][value=RED]")
	ph.click("input[name=confirmFinal]")
	ph.expectError("status of 400")
	ph.submit("#decision button[type=submit]")
	ph.contains("Choose at least one reject label")
	if where := eval[[]float64](ph, `(() => { const r = document.querySelector('#decision-error').getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight, window.scrollY] })()`); where[0] < -1 || where[1] > where[2] || where[3] == 0 {
		t.Errorf("on a phone the refused decision's error is at %v px (viewport %v px high, scrolled %v): out of view", where[0], where[2], where[3])
	}
	ph.open(strings.TrimSuffix(eval[string](ph, `location.pathname`), "#decision-error"))
	ph.contains("held-2", "Decision")
}

// TestBrowserConsolePhoneReadable: at 390 px no key of a key/value table
// runs over its value (a company's structure and rows have keys such as
// verificationLinkExpiresAtUtc), and a signing secret shown only once, or
// a logged request's body with a long hash, wraps inside its box, whole
// and readable, instead of hiding its end in a box a keyboard cannot
// scroll (axe scrollable-region-focusable).
func TestBrowserConsolePhoneReadable(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createCompany("phone-co", "Phone Co",
		map[string]any{"fullName": "Ada Owner", "dateOfBirth": "1980-01-01", "ownershipPercent": 60, "roles": []string{"ubo", "representative"}})
	in.spawn(201, "phone-co", 0, nil)
	// A deposit's answer holds a 64-character txHash, one unbroken word.
	w := in.wallet(in.vault("phone-vault"), "BTC")
	deposit := in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5"}).Header.Get("X-Request-Id")
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	overflowing := `Array.from(document.querySelectorAll('table.kv th, table.kv td, pre')).filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.tagName + ' ' + e.textContent.trim().slice(0, 40) + ' ' + e.scrollWidth + '>' + e.clientWidth).join('; ')`

	ph := in.chrome(t, phone)
	ph.consoleLogin("admin")
	for _, p := range []string{"/console/applicants/phone-co", "/console/applicants/phone-co.ubo.1", "/console/levels/kyb-level", "/console/requests/" + deposit} {
		ph.open(p)
		if bad := eval[string](ph, overflowing); bad != "" {
			t.Errorf("%s at 390 px: cells whose text runs over: %s", p, bad)
		}
		ph.a11y()
	}
	ph.open("/console/settings")
	ph.submit("form[action='/console/settings/callback/rotate'] button[type=submit]")
	ph.contains("shown only now")
	if n := ph.count("pre.secret"); n != 1 {
		t.Fatalf("%d secrets shown", n)
	}
	if bad := eval[string](ph, overflowing); bad != "" {
		t.Errorf("the rotated secret at 390 px runs over: %s", bad)
	}
	ph.a11y()
}

// TestBrowserConsoleWideValuesWrap: at a desktop's and a narrow window's
// width, long values of key/value tables (a URL in an operator's comment,
// a long company name, an owner row's link, a transaction's hash) wrap
// inside their card: the page never scrolls sideways and no card's table
// runs over the next one. (They wrapped only below 640 px: a comment with
// a URL made an applicant's page 1455 px wide at 1366 px.)
func TestBrowserConsoleWideValuesWrap(t *testing.T) {
	t.Parallel()
	in := start(t)
	ak, as := in.credential(store.Sandbox, store.RoleAdmin)
	in.createApplicant("url-comment", "MANUAL")
	in.expect(200, "POST", "/v1/applicants/url-comment/verify", verifyBody(t, 91))
	in.waitReviewStatus("url-comment", "awaitingOperatorReview")
	in.expect(200, "POST", "/v1/admin/applicants/url-comment/decision", map[string]any{"reviewAnswer": "RED", "reviewRejectType": "RETRY",
		"rejectLabels": []string{"OTHER"}, "moderationComment": "See https://docs.partner.example/compliance/cases/2026/11/ABCDEF1234567890/evidence?ref=complybox\nand the second line"},
		"X-Api-Key", ak, "X-Api-Secret", as)
	in.createCompany("wide-co", "Wide"+strings.Repeat("Holding", 12)+" GmbH",
		map[string]any{"fullName": "Ada Owner", "dateOfBirth": "1980-01-01", "ownershipPercent": 60, "roles": []string{"ubo"}})
	in.spawn(201, "wide-co", 0, nil)
	w := in.wallet(in.vault("wide-vault"), "ETH")
	var deposit struct{ TransactionID string }
	in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5"}).json(t, &deposit)
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	pages := []string{"/console/applicants/url-comment", "/console/applicants/wide-co", "/console/transactions/" + deposit.TransactionID, "/console/wallets/" + w.WalletID}
	for _, vp := range []viewport{desktop, {800, 900, false}} {
		tb := in.chrome(t, vp)
		tb.consoleLogin("admin")
		for _, p := range pages {
			tb.open(p)
			if wide := eval[int](tb, `document.documentElement.scrollWidth`); wide > int(vp.W) {
				t.Errorf("%s is %d px wide at %d px; widest: %s", p, wide, vp.W, eval[string](tb, `Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !e.closest('.scroll')).slice(0, 4).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')`))
			}
			if p == "/console/applicants/url-comment" {
				// The comment keeps its line break in every cell that shows it.
				if ws := eval[string](tb, `Array.from(document.querySelectorAll('td.text')).map(e => getComputedStyle(e).whiteSpace).join(',')`); ws != "pre-line,pre-line" && ws != "pre-line,pre-line,pre-line" {
					t.Errorf("comment cells' white-space: %q, want pre-line", ws)
				}
			}
			if over := eval[string](tb, `Array.from(document.querySelectorAll('.card table.kv')).filter(t => t.getBoundingClientRect().right > t.closest('.card').getBoundingClientRect().right + 1).map(t => t.closest('.card').querySelector('h2, caption') ? t.closest('.card').querySelector('h2, caption').textContent : '?').join('; ')`); over != "" {
				t.Errorf("%s at %d px: tables run out of their card: %s", p, vp.W, over)
			}
		}
		tb.a11y()
	}
}

// TestBrowserConsoleRefusedFormFocusesItsField: a refused form comes back
// with the cursor in the field its error names (autofocus), on screen
// whatever stands above the form (a long deliveries list), and the field
// described by the error, at a phone's and a desktop's width.
func TestBrowserConsoleRefusedFormFocusesItsField(t *testing.T) {
	t.Parallel()
	in := start(t)
	for i := range 40 {
		in.createApplicant(fmt.Sprintf("long-%d", i), "Doe") // a long list of kyc deliveries
	}
	if err := in.Store.SetConsolePassword(consolePassword); err != nil {
		t.Fatal(err)
	}
	for _, size := range []viewport{phone, desktop} {
		tb := in.chrome(t, size)
		tb.consoleLogin("admin")
		for _, c := range []struct{ page, form, field, value string }{
			{"/console/deliveries", "/console/retry-deliveries", "since", "yesterday"},
			{"/console/settings", "/console/settings/callback", "callbackUrl", "ftp://127.0.0.1/x"},
			// No event type ticked: the first box takes the focus.
			{"/console/settings", "/console/settings/webhook", "subscribedEventTypes", ""},
		} {
			tb.open(c.page)
			if c.value != "" {
				tb.fill("form[action='"+c.form+"'] [name="+c.field+"]", c.value)
			} else {
				tb.fill("form[action='"+c.form+"'] [name=url]", "https://example.com/hook")
				eval[any](tb, `document.querySelectorAll("form[action='`+c.form+`'] [name=`+c.field+`]").forEach(b => b.checked = false)`)
			}
			tb.expectError("status of 400")
			tb.submit("form[action='" + c.form + "'] button[type=submit]")
			// Autofocus runs after the load; a headless tab has no system
			// focus, so :focus never matches: read activeElement.
			for i := 0; i < 100 && eval[string](tb, `document.activeElement.name || ''`) != c.field; i++ {
				time.Sleep(20 * time.Millisecond) // polls the browser, not the clock under test
			}
			focus := eval[[]any](tb, `(() => { const e = document.activeElement, r = e.getBoundingClientRect();
				return [e.name || e.tagName, e.getAttribute('aria-describedby') || '', r.top >= 0 && r.bottom <= innerHeight] })()`)
			if focus[0] != c.field || focus[1] == "" || focus[2] != true {
				t.Errorf("%s at %v: after the refused form the focus is %v, want %s on screen, described by its error", c.form, size, focus, c.field)
			}
			tb.a11y()
		}
	}
}
