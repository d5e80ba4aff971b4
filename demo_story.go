package main

// The three parts of the demo's story: each step, the webhooks that follow
// it and the state read back from the API.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// verdict is the review part of an applicant's status.
type verdict struct {
	ReviewStatus     string   `json:"reviewStatus"`
	ReviewAnswer     string   `json:"reviewAnswer"`
	ReviewRejectType string   `json:"reviewRejectType"`
	RejectLabels     []string `json:"rejectLabels"`
}

// String reads "GREEN", "RED FINAL [FORGERY]", or the review status while
// there is no answer.
func (v verdict) String() string {
	if v.ReviewAnswer == "" {
		return v.ReviewStatus
	}
	s := v.ReviewAnswer
	if v.ReviewRejectType != "" {
		s += " " + v.ReviewRejectType
	}
	if len(v.RejectLabels) > 0 {
		s += " [" + strings.Join(v.RejectLabels, ", ") + "]"
	}
	return s
}

// status reads an applicant's review status from the API.
func (d *demo) status(extID string) (verdict, error) {
	var v verdict
	err := d.call("GET", "/v1/applicants/"+extID+"/status", nil, http.StatusOK, &v)
	return v, err
}

// verifyBody is a direct-verification body with generated images.
func verifyBody(seed byte) map[string]any {
	return map[string]any{
		"idDocType":     "PASSPORT",
		"country":       "DEU",
		"documentFront": base64.StdEncoding.EncodeToString(demoImage(seed)),
		"selfie":        base64.StdEncoding.EncodeToString(demoImage(seed + 100)),
	}
}

// demoImage returns a 240×240 PNG whose pixels depend on seed, so that no
// two images of the demo are duplicates.
func demoImage(seed byte) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 240, 240))
	for y := range 240 {
		for x := range 240 {
			img.Set(x, y, color.RGBA{uint8(x) ^ seed, uint8(y) + seed, uint8(x*y) ^ seed, 255})
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	return buf.Bytes()
}

// person creates an individual applicant and verifies them directly with a
// passport photo and a selfie; the sandbox reviewer answers at once. It
// checks the verdict the webhook and the API report.
func (d *demo) person(extID, first, last string, seed byte, want string) error {
	d.step("create applicant %s (%s %s) on level basic-kyc-level", extID, first, last)
	if err := d.call("POST", "/v1/applicants", map[string]any{
		"externalUserId": extID, "firstName": first, "lastName": last, "dateOfBirth": "1990-04-01", "nationality": "DEU",
	}, http.StatusCreated, nil); err != nil {
		return err
	}
	if err := d.kyc("applicantCreated", extID); err != nil {
		return err
	}
	return d.verifyPerson(extID, first, seed, want)
}

// verifyPerson sends a passport photo and a selfie for extID and waits for
// the verdict want.
func (d *demo) verifyPerson(extID, first string, seed byte, want string) error {
	d.step("%s sends a passport photo and a selfie; the sandbox reviewer decides at once", first)
	if err := d.call("POST", "/v1/applicants/"+extID+"/verify", verifyBody(seed), http.StatusOK, nil); err != nil {
		return err
	}
	if err := d.kyc("applicantPending", extID); err != nil {
		return err
	}
	if err := d.webhook(demoKYCPath, "applicantReviewed", extID, nil); err != nil {
		return err
	}
	v, err := d.status(extID)
	if err != nil {
		return err
	}
	if v.ReviewStatus != "completed" || v.String() != want {
		return fmt.Errorf("%s is %s %s, want completed %s", extID, v.ReviewStatus, v, want)
	}
	return nil
}

func (d *demo) individual() error {
	if err := d.person("demo-alice", "Alice", "Example", 1, "GREEN"); err != nil {
		return err
	}
	d.state("demo-alice is verified: GREEN")
	if err := d.person("demo-mallory", "Mallory", "Reject", 2, "RED FINAL [FORGERY]"); err != nil {
		return err
	}
	d.state("demo-mallory is rejected for good: the sandbox turns down the last name Reject")
	return nil
}

// structure reads a company's beneficial-owner counts from the API.
func (d *demo) structure(extID string) (total, verified int, err error) {
	var cs struct {
		AllChildrenComplete bool `json:"allChildrenComplete"`
		Counts              struct {
			Total, Completed int
		} `json:"counts"`
	}
	err = d.call("GET", "/v1/applicants/"+extID+"/company-structure", nil, http.StatusOK, &cs)
	if err == nil && cs.AllChildrenComplete != (cs.Counts.Completed == cs.Counts.Total) {
		err = fmt.Errorf("%s: %d of %d owners verified, but allChildrenComplete is %v",
			extID, cs.Counts.Completed, cs.Counts.Total, cs.AllChildrenComplete)
	}
	return cs.Counts.Total, cs.Counts.Completed, err
}

// inReview checks that the company is still in review with verified of its
// owners verified, and says so.
func (d *demo) inReview(extID string, verified int) error {
	v, err := d.status(extID)
	if err != nil {
		return err
	}
	total, done, err := d.structure(extID)
	if err != nil {
		return err
	}
	if v.ReviewStatus != "in_review" || done != verified {
		return fmt.Errorf("%s is %s with %d of %d owners verified, want in_review with %d", extID, v, done, total, verified)
	}
	d.state("%s stays in review: %d of its %d owners verified; it waits for all of them", extID, done, total)
	return nil
}

// waitReviewed waits until the sandbox reviewer has decided every step of
// extID that was sent to review.
func (d *demo) waitReviewed(extID string) error {
	deadline := time.Now().Add(demoTimeout)
	for {
		var sv struct {
			Steps []struct{ Kind, ReviewStatus, ReviewAnswer string }
		}
		if err := d.call("GET", "/v1/applicants/"+extID+"/steps", nil, http.StatusOK, &sv); err != nil {
			return err
		}
		busy := ""
		for _, s := range sv.Steps {
			if s.ReviewStatus == "submitted" || s.ReviewStatus == "in_review" {
				busy = s.Kind
			}
		}
		if busy == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: step %s still in review after %s", extID, busy, demoTimeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *demo) company() error {
	const parent = "demo-acme"
	d.step("create company %s (Acme Trading) on level kyb-level, owned by two people:", parent)
	d.printf("   Bob Builder (60%%, also director) and Carol Client (40%%)\n")
	if err := d.call("POST", "/v1/applicants", map[string]any{
		"externalUserId": parent, "type": "company", "companyName": "Acme Trading", "registrationNumber": "HRB 1234",
		"country": "DEU", "legalForm": "gmbh",
		"ubos": []map[string]any{
			{"fullName": "Bob Builder", "dateOfBirth": "1980-02-03", "ownershipPercent": 60, "roles": []string{"ubo", "director"}},
			{"fullName": "Carol Client", "dateOfBirth": "1985-05-06", "ownershipPercent": 40, "roles": []string{"ubo"}},
		},
	}, http.StatusCreated, nil); err != nil {
		return err
	}
	if err := d.kyc("applicantCreated", parent); err != nil {
		return err
	}
	var app struct {
		Ubos []struct {
			UboIndex int    `json:"uboIndex"`
			FullName string `json:"fullName"`
		} `json:"ubos"`
	}
	if err := d.call("GET", "/v1/applicants/"+parent, nil, http.StatusOK, &app); err != nil {
		return err
	}
	if len(app.Ubos) != 2 {
		return fmt.Errorf("%s has %d beneficial-owner rows, want 2", parent, len(app.Ubos))
	}

	d.step("upload its certificate of incorporation and its register of shareholders")
	for i, doc := range []string{"certificate_of_incorporation", "register_of_shareholders"} {
		if err := d.call("POST", "/v1/applicants/"+parent+"/documents", map[string]any{
			"kind": "company_docs", "docType": doc, "image": base64.StdEncoding.EncodeToString(demoImage(byte(50 + i))),
		}, http.StatusCreated, nil); err != nil {
			return err
		}
	}
	d.step("send %s to review; the sandbox reviewer checks its documents shortly", parent)
	if err := d.call("POST", "/v1/applicants/"+parent+"/review", nil, http.StatusOK, nil); err != nil {
		return err
	}
	if err := d.kyc("applicantPending", parent); err != nil {
		return err
	}
	if err := d.waitReviewed(parent); err != nil {
		return err
	}
	if err := d.inReview(parent, 0); err != nil {
		return err
	}

	// Every row gets a child applicant, and every child is verified: the
	// company's verdict waits for all of them.
	for i, row := range app.Ubos {
		var sp struct {
			ChildExternalUserID string `json:"childExternalUserId"`
			SDKLink             struct {
				ShortURL string `json:"shortUrl"`
			} `json:"sdkLink"`
		}
		d.step("start KYC for owner %s: a child applicant of %s", row.FullName, parent)
		path := "/v1/applicants/" + parent + "/ubos/" + strconv.Itoa(row.UboIndex) + "/spawn-kyc"
		if err := d.call("POST", path, map[string]any{}, http.StatusCreated, &sp); err != nil {
			return err
		}
		child := sp.ChildExternalUserID
		if err := d.kyc("applicantCreated", child); err != nil {
			return err
		}
		d.printf("   %s's own verification page: %s\n", row.FullName, sp.SDKLink.ShortURL)
		first, _, _ := strings.Cut(row.FullName, " ")
		if err := d.verifyPerson(child, first, byte(10+i), "GREEN"); err != nil {
			return err
		}
		if i < len(app.Ubos)-1 {
			if err := d.inReview(parent, i+1); err != nil {
				return err
			}
		}
	}
	if err := d.kyc("applicantReviewed", parent); err != nil {
		return err
	}
	v, err := d.status(parent)
	if err != nil {
		return err
	}
	total, verified, err := d.structure(parent)
	if err != nil {
		return err
	}
	if v.ReviewStatus != "completed" || v.String() != "GREEN" || total != len(app.Ubos) || verified != total {
		return fmt.Errorf("%s is %s %s with %d of %d owners verified, want completed GREEN with all",
			parent, v.ReviewStatus, v, verified, total)
	}
	d.state("%s is verified: GREEN, now that its %d owners are verified too", parent, total)
	return nil
}

func (d *demo) custody() error {
	d.step("register the receiver for custody webhooks (PUT /webhooks/outbound)")
	var hook struct{ SigningSecret string }
	if err := d.call("PUT", "/webhooks/outbound", map[string]any{"url": d.rc.url + demoCustodyPath}, http.StatusOK, &hook); err != nil {
		return err
	}
	d.rc.setSecret(demoCustodyPath, hook.SigningSecret)

	d.step("create the vault \"Demo treasury\" and a BTC wallet in it")
	var vault struct{ VaultID string }
	if err := d.call("POST", "/vaults", map[string]any{"name": "Demo treasury", "externalId": "demo-vault-1"}, http.StatusCreated, &vault); err != nil {
		return err
	}
	var w struct{ WalletID, DepositAddress string }
	if err := d.call("POST", "/vaults/"+vault.VaultID+"/wallets", map[string]any{"assetSymbol": "BTC", "label": "BTC hot wallet"}, http.StatusCreated, &w); err != nil {
		return err
	}
	if err := d.webhook(demoCustodyPath, "wallet.created", w.WalletID, nil); err != nil {
		return err
	}
	d.state("deposit address %s", w.DepositAddress)

	d.step("someone sends 0.5 BTC to that address (sandbox deposit)")
	var dep struct{ TransactionID string }
	if err := d.call("POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "0.5"}, http.StatusCreated, &dep); err != nil {
		return err
	}
	if err := d.webhook(demoCustodyPath, "transaction.created", dep.TransactionID, nil); err != nil {
		return err
	}
	d.printf("   the sandbox chain moves it along, one status every 200ms:\n")
	if err := d.transaction(dep.TransactionID, "Submitted", "Confirming", "Completed"); err != nil {
		return err
	}
	if err := d.webhook(demoCustodyPath, "balance.updated", "", nil); err != nil {
		return err
	}
	if err := d.balance(w.WalletID, "0.5", "0.5"); err != nil {
		return err
	}

	d.step("withdraw 0.1 BTC to an outside address; the network fee is 0.0001 BTC")
	var wd struct{ TransactionID string }
	if err := d.call("POST", "/transactions", map[string]any{
		"type": "Withdrawal", "sourceWalletId": w.WalletID, "amount": "0.1",
		"destinationAddress": "bc1qdemo0000000000000000000000000000000000", "note": "demo payout",
	}, http.StatusCreated, &wd); err != nil {
		return err
	}
	if err := d.webhook(demoCustodyPath, "transaction.created", wd.TransactionID, nil); err != nil {
		return err
	}
	d.printf("   0.1001 BTC is set aside at once, so it cannot be spent twice:\n")
	if err := d.webhook(demoCustodyPath, "balance.updated", "", nil); err != nil {
		return err
	}
	if err := d.transaction(wd.TransactionID, "Submitted", "PendingSignature", "Broadcasting", "Confirming", "Completed"); err != nil {
		return err
	}
	if err := d.webhook(demoCustodyPath, "balance.updated", "", nil); err != nil {
		return err
	}
	return d.balance(w.WalletID, "0.3999", "0.3999")
}

// transaction waits for the status changes of transaction id through
// statuses, in order, and prints them.
func (d *demo) transaction(id string, statuses ...string) error {
	for i := 1; i < len(statuses); i++ {
		prev, next := statuses[i-1], statuses[i]
		if err := d.webhook(demoCustodyPath, "transaction.status.updated", id, func(data json.RawMessage) bool {
			var x struct {
				Status         string
				PreviousStatus *string
			}
			return json.Unmarshal(data, &x) == nil && x.Status == next && x.PreviousStatus != nil && *x.PreviousStatus == prev
		}); err != nil {
			return err
		}
	}
	return nil
}

// balance checks the wallet's balance as the API reports it now.
func (d *demo) balance(walletID, total, available string) error {
	var b struct{ Total, Available string }
	if err := d.call("GET", "/wallets/"+walletID+"/balance", nil, http.StatusOK, &b); err != nil {
		return err
	}
	if b.Total != total || b.Available != available {
		return fmt.Errorf("wallet %s: total %s, available %s; want %s, %s", walletID, b.Total, b.Available, total, available)
	}
	d.state("the wallet holds %s BTC, %s of it available", b.Total, b.Available)
	return nil
}

// balanceOf reads the balance of the wallet of vault and asset, as a
// receiver does on balance.updated (which carries no amounts).
func (d *demo) balanceOf(vaultID, assetID string) string {
	var ws struct {
		Items []struct{ WalletID, AssetID string }
	}
	if err := d.call("GET", "/vaults/"+vaultID+"/wallets", nil, http.StatusOK, &ws); err != nil {
		return "(balance unreadable: " + err.Error() + ")"
	}
	for _, w := range ws.Items {
		if w.AssetID != assetID {
			continue
		}
		var b struct{ Total, Available string }
		if err := d.call("GET", "/wallets/"+w.WalletID+"/balance", nil, http.StatusOK, &b); err != nil {
			return "(balance unreadable: " + err.Error() + ")"
		}
		return "total " + b.Total + " available " + b.Available
	}
	return "(no wallet for " + assetID + ")"
}
