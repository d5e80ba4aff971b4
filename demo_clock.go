package main

// The fourth part of the demo's story: the sandbox test clock.

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// clockMove is the answer of POST /v1/sandbox/clock.
type clockMove struct {
	Now    string         `json:"now"`
	Offset string         `json:"offset"`
	Ran    map[string]int `json:"ran"`
}

// moveClock moves the sandbox clock ahead by by and prints where it is now.
func (d *demo) moveClock(by string) (clockMove, error) {
	d.step("move the sandbox clock %s ahead (POST /v1/sandbox/clock)", by)
	var mv clockMove
	err := d.call("POST", "/v1/sandbox/clock", map[string]any{"advanceBy": by}, http.StatusOK, &mv)
	if err == nil {
		d.state("the sandbox clock reads %s, %s ahead of this machine's", mv.Now, mv.Offset)
	}
	return mv, err
}

// clock shows the test clock: a link of an hour expires two hours later,
// and a webhook to a receiver that is down is retried to its end, both at
// once.
func (d *demo) clock() error {
	d.step("create applicant demo-erin and a verification link that lasts one hour")
	if err := d.call("POST", "/v1/applicants", map[string]any{
		"externalUserId": "demo-erin", "firstName": "Erin", "lastName": "Early", "dateOfBirth": "1992-03-04",
	}, http.StatusCreated, nil); err != nil {
		return err
	}
	if err := d.kyc("applicantCreated", "demo-erin"); err != nil {
		return err
	}
	var link struct{ ShortURL, Token string }
	if err := d.call("POST", "/v1/applicants/demo-erin/verification-sessions", map[string]any{"ttlSecs": 3600},
		http.StatusCreated, &link); err != nil {
		return err
	}
	if err := d.page(link.Token, http.StatusOK); err != nil {
		return err
	}
	d.state("the link works: %s", link.ShortURL)
	mv, err := d.moveClock("2h")
	if err != nil {
		return err
	}
	if mv.Ran["expiry"] != 1 {
		return fmt.Errorf("the move expired %d links, want 1", mv.Ran["expiry"])
	}
	if err := d.page(link.Token, http.StatusGone); err != nil {
		return err
	}
	var steps struct {
		Steps []struct{ ReviewStatus string }
	}
	if err := d.call("GET", "/v1/applicants/demo-erin/steps", nil, http.StatusOK, &steps); err != nil {
		return err
	}
	for _, s := range steps.Steps {
		if s.ReviewStatus != "expired" {
			return fmt.Errorf("a step of demo-erin is %s after the link expired, want expired", s.ReviewStatus)
		}
	}
	d.state("the link expired on the way: its page answers 410 Gone, Erin's steps are expired")

	d.step("point custody webhooks at a receiver that is down, and send a test event")
	if err := d.call("PUT", "/webhooks/outbound", map[string]any{"url": d.rc.url + demoDownPath}, http.StatusOK, nil); err != nil {
		return err
	}
	var test struct{ DeliveryID string }
	if err := d.call("POST", "/webhooks/outbound/test", nil, http.StatusAccepted, &test); err != nil {
		return err
	}
	d.printf("   a failed webhook is tried again after 10s, 30s, 1m and 5m, then given up:\n")
	if _, err := d.moveClock("30m"); err != nil {
		return err
	}
	var dl struct {
		Status   string
		Attempts []struct {
			AttemptedAt    string
			HTTPStatusCode int
		}
	}
	if err := d.call("GET", "/webhooks/deliveries/"+test.DeliveryID, nil, http.StatusOK, &dl); err != nil {
		return err
	}
	if dl.Status != "dead" || len(dl.Attempts) != 5 {
		return fmt.Errorf("delivery %s is %s after %d attempts, want dead after 5: %+v", test.DeliveryID, dl.Status, len(dl.Attempts), dl.Attempts)
	}
	var at []string
	for _, a := range dl.Attempts {
		if a.HTTPStatusCode != http.StatusServiceUnavailable {
			return fmt.Errorf("an attempt got %d, want 503", a.HTTPStatusCode)
		}
		t, _ := time.Parse(time.RFC3339, a.AttemptedAt)
		at = append(at, t.Format("15:04:05"))
	}
	d.state("the webhook is dead after 5 attempts, each answered 503")
	d.printf("     made at %s on the sandbox clock\n", strings.Join(at, ", "))
	d.printf("   Production has no test clock: its time is always this machine's.\n")
	return nil
}

// page fetches the hosted verification page of token and checks its status.
func (d *demo) page(token string, want int) error {
	req, err := http.NewRequestWithContext(d.ctx, "GET", d.base+"/sdk/"+token, nil)
	if err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("the verification page answered %d, want %d", resp.StatusCode, want)
	}
	return nil
}
