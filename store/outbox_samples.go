package store

// Test events on demand (SPEC §7): a sample of any catalog type, built from
// the same types and functions as the real events so that its data has the
// real shape, with synthetic ids, delivered through the outbox like any
// event and marked as a test (Delivery.Test, X-Webhook-Test: true).

// SendSampleEvent enqueues a test event to dest (DestCustody: the custody
// webhook; DestKYC: the KYC callback) and returns its delivery id. With
// eventType "" or "webhook.test" (the default, named) the event is
// webhook.test; otherwise a sample of that type of dest's catalog,
// delivered whatever the subscription. Returns EINVALID naming eventType
// for a type outside dest's catalog and ECONFLICT webhook_not_configured
// when dest has no URL.
func (s *Store) SendSampleEvent(env Env, dest, eventType string) (string, error) {
	catalog, how := CustodyCatalog(), "PUT /webhooks/outbound"
	if dest == DestKYC {
		catalog, how = KYCCatalog(), "set [kyc] callback_url or the console's KYC callback URL"
	}
	if eventType == "webhook.test" {
		eventType = ""
	}
	if eventType != "" && !inCatalog(catalog, eventType) {
		var names []string
		for _, e := range catalog {
			names = append(names, e.Name)
		}
		return "", Invalid("eventType", "eventType must be one of %s, or webhook.test (the default)", joinNames(names))
	}
	var id string
	err := s.updateIn(env, func(t *txn) error {
		url, err := t.destinationURL(env, dest)
		if err != nil {
			return err
		}
		if url == "" {
			return Conflict("webhook_not_configured", "no URL is configured for %s events; %s first", dest, how)
		}
		id = newID()
		entityType, entityID, data := "webhook", id, any(map[string]any{"message": "This is a test event from complybox.", "sentAt": At(t.now)})
		if eventType != "" {
			if entityType, entityID, data, err = t.sample(env, eventType); err != nil {
				return err
			}
		} else {
			eventType = "webhook.test"
		}
		ev, err := newEvent(eventType, entityType, entityID, t.now, data)
		if err != nil {
			return err
		}
		_, err = t.createDelivery(env, dest, t.emit(env, ev), id, true)
		return err
	})
	return id, err
}

// destinationURL is the URL dest's deliveries go to, "" when none.
func (t *txn) destinationURL(env Env, dest string) (string, error) {
	if dest == DestKYC {
		c, err := t.callback()
		return c.URL, err
	}
	c, err := t.webhookConfig(env)
	return c.URL, err
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}

// sample returns the entity and data of a realistic event of eventType,
// with synthetic ids.
func (t *txn) sample(env Env, eventType string) (entityType, entityID string, data any, err error) {
	switch eventType {
	case "transaction.created", "transaction.status.updated", "wallet.created", "balance.updated":
		a, err := t.sampleAsset(env)
		if err != nil {
			return "", "", nil, err
		}
		switch eventType {
		case "wallet.created":
			w := Wallet{WalletID: newID(), VaultID: newID(), AssetID: a.ID, Label: "Test wallet", DepositAddress: newAddress(a.Network),
				Status: WalletActive, CreatedAt: At(t.now)}
			return "wallet", w.WalletID, w, nil
		case "balance.updated":
			b := balanceData{VaultAccountID: newID(), AssetID: a.ID}
			return "balance", b.VaultAccountID + ":" + b.AssetID, b, nil
		}
		x := t.sampleTransaction(a)
		if eventType == "transaction.created" {
			x.Status, x.PreviousStatus, x.TxHash, x.CompletedAt = StatusSubmitted, nil, nil, Time{}
			return "transaction", x.TransactionID, x.createdData(), nil
		}
		return "transaction", x.TransactionID, x.statusData(), nil
	}
	a := &diskApplicant{ID: newID(), ExternalID: "test-applicant-" + randomHex(4), Type: TypeIndividual, Level: t.s.settings.KYC.DefaultIndividualLevel,
		Status: StatusActive, RiskLevel: RiskUnknown, Review: Review{ReviewStatus: ReviewPending, RejectLabels: []string{}}}
	var extra map[string]any
	switch eventType {
	case "applicantPending":
		a.Review.ReviewStatus = ReviewInReview // as sent at submission
		extra = map[string]any{"attempt": 1}
	case "applicantOnHold":
		a.Review.ReviewStatus = ReviewAwaiting
	case "applicantReviewed":
		a.Review = Review{ReviewStatus: ReviewCompleted, ReviewAnswer: Green, RejectLabels: []string{}, ReviewedAtUtc: At(t.now)}
		a.RiskLevel = RiskLow
	case "applicantPersonalInfoChanged":
		extra = map[string]any{"fields": []string{"firstName", "lastName"}}
	case "applicantLevelChanged":
		extra = map[string]any{"previousLevelName": a.Level}
		a.Level = "full-kyc-level"
	}
	return "applicant", a.ExternalID, applicantEventData(env, a, eventType, extra), nil
}

// sampleAsset is the asset of custody samples: ETH when the catalog has it.
func (t *txn) sampleAsset(env Env) (Asset, error) {
	list, _, err := t.assets(env)
	if err != nil {
		return Asset{}, err
	}
	if len(list) == 0 {
		return Asset{}, Errorf(EINTERNAL, "internal_error", "no asset in the catalog")
	}
	for _, a := range list {
		if a.Symbol == "ETH" {
			return a, nil
		}
	}
	return list[0], nil
}

// sampleTransaction is a completed withdrawal of asset a between synthetic
// wallets, with every field of the record set as a real one would be.
func (t *txn) sampleTransaction(a Asset) diskTransaction {
	now := At(t.now)
	prev := StatusConfirming
	x := diskTransaction{Transaction: Transaction{
		TransactionID: newID(), Type: TxWithdrawal, Status: StatusCompleted, PreviousStatus: &prev,
		VaultID: newID(), VaultExternalID: "test-vault", VaultName: "Test vault",
		AssetID: a.ID, AssetSymbol: a.Symbol, AssetNetwork: a.Network, SourceWalletID: strp(newID()),
		Amount: "0.5", SourceAddress: newAddress(a.Network), DestinationAddress: newAddress(a.Network),
		TxHash: strp(newTxHash(a.Network)), NetworkFee: strp(a.NetworkFee), FeeCurrency: strp(a.Symbol),
		Note: strp("complybox test event"), CreatedAt: now, UpdatedAt: now, CompletedAt: now,
	}}
	if a.NeedsMemo {
		x.DestinationTag = strp("1234567")
	}
	x.priceUSD(a)
	return x
}
