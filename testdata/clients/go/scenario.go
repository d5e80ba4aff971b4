// Command scenario runs the partner scenario through a Go client generated
// from /openapi.json by oapi-codegen with its default options, unedited
// (package client beside this file). Env: COMPLYBOX_URL, COMPLYBOX_KEY,
// COMPLYBOX_SECRET, COMPLYBOX_IMAGES.
package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"

	"example.com/scenario/client"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Println("FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run(ctx context.Context) error {
	auth := client.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-Api-Key", os.Getenv("COMPLYBOX_KEY"))
		r.Header.Set("X-Api-Secret", os.Getenv("COMPLYBOX_SECRET"))
		return nil
	})
	api, err := client.NewClientWithResponses(os.Getenv("COMPLYBOX_URL"), auth)
	if err != nil {
		return err
	}
	image := func(name string) *string {
		b, _ := os.ReadFile(os.Getenv("COMPLYBOX_IMAGES") + "/" + name)
		s := base64.StdEncoding.EncodeToString(b)
		return &s
	}
	str := func(s string) *string { return &s }
	must := func(what string, status int, ok bool, err error) error {
		if err == nil && !ok {
			err = fmt.Errorf("status %d", status)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		fmt.Printf("%s: %d\n", what, status)
		return nil
	}
	const id = "go-1"
	a, err := api.CreateApplicantWithResponse(ctx, nil, client.CreateApplicantJSONRequestBody{ExternalUserId: id,
		FirstName: str("Ada"), LastName: str("Lovelace"), Nationality: str("GBR")})
	if err := must("create applicant", a.StatusCode(), err == nil && a.JSON201 != nil, err); err != nil {
		return err
	}
	s, err := api.CreateVerificationSessionWithResponse(ctx, id, nil, client.CreateVerificationSessionJSONRequestBody{})
	if err := must("create session", s.StatusCode(), err == nil && s.JSON201 != nil, err); err != nil {
		return err
	}
	doc := client.PASSPORT
	v, err := api.VerifyApplicantWithResponse(ctx, id, nil, client.VerifyApplicantJSONRequestBody{IdDocType: &doc,
		Country: str("DEU"), DocumentFront: image("front.png"), Selfie: image("selfie.jpg")})
	if err := must("verify", v.StatusCode(), err == nil && v.JSON200 != nil, err); err != nil {
		return err
	}
	st, err := api.GetApplicantStatusWithResponse(ctx, id, nil)
	if err := must("status", st.StatusCode(), err == nil && st.JSON200 != nil, err); err != nil {
		return err
	}
	vault, err := api.CreateVaultWithResponse(ctx, nil, client.CreateVaultJSONRequestBody{Name: "go vault", ExternalId: str("go-vault")})
	if err := must("create vault", vault.StatusCode(), err == nil && vault.JSON201 != nil, err); err != nil {
		return err
	}
	w, err := api.CreateWalletWithResponse(ctx, vault.JSON201.VaultId.String(), nil, client.CreateWalletJSONRequestBody{AssetSymbol: str("ETH"), Label: str("go wallet")})
	if err := must("create wallet", w.StatusCode(), err == nil && w.JSON201 != nil, err); err != nil {
		return err
	}
	d, err := api.CreateSandboxDepositWithResponse(ctx, nil, client.CreateSandboxDepositJSONRequestBody{WalletId: w.JSON201.WalletId, Amount: "1.5"})
	if err := must("deposit", d.StatusCode(), err == nil && d.JSON201 != nil, err); err != nil {
		return err
	}
	b, err := api.GetBalanceWithResponse(ctx, w.JSON201.WalletId.String(), nil)
	if err := must("balance", b.StatusCode(), err == nil && b.JSON200 != nil, err); err != nil {
		return err
	}
	fmt.Printf("balance total %s pending %s\n", b.JSON200.Total, b.JSON200.Pending)
	if !slices.Contains(a.JSON201.LockedFields, "nationality") {
		return fmt.Errorf("nationality is not locked: %v", a.JSON201.LockedFields)
	}
	// null clears and unlocks a field (SPEC §3.2); the typed body omits nil
	// pointers, so the generated client's WithBody variant sends it.
	u, err := api.UpdateApplicantWithBodyWithResponse(ctx, id, nil, "application/json", strings.NewReader(`{"nationality":null}`))
	if err := must("clear nationality", u.StatusCode(), err == nil && u.JSON200 != nil, err); err != nil {
		return err
	}
	if slices.Contains(u.JSON200.LockedFields, "nationality") || u.JSON200.Info == nil || u.JSON200.Info.Nationality != nil {
		return fmt.Errorf("nationality still set or locked: %s", u.Body)
	}
	return nil
}
