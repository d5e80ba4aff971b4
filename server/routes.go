package server

// routes lists every route of complybox: the API can be read in one place.
// api(...) requires X-Api-Key and X-Api-Secret; admin(...) also the admin
// role; public(...) requires nothing.
func (s *Server) routes() {
	r := s.router

	// Process.
	r.GET("/healthz", s.public(s.healthz))
	r.GET("/openapi.json", s.public(s.openapi))
	r.GET("/v1/admin/backup", s.admin(s.backup))

	// Custody webhooks (seed 001 §4).
	r.PUT("/webhooks/outbound", s.api(s.putWebhook))
	r.GET("/webhooks/outbound", s.api(s.getWebhook))
	r.POST("/webhooks/outbound/test", s.api(s.testWebhook))
	r.GET("/webhooks/deliveries", s.api(s.listDeliveries))
	r.GET("/webhooks/deliveries/:id", s.api(s.getDelivery))
	r.POST("/webhooks/deliveries/:id", s.api(s.postDeliveries)) // only :id = "retry": bulk retry
	r.POST("/webhooks/deliveries/:id/retry", s.api(s.retryDelivery))
	r.GET("/webhooks/events/catalog", s.api(s.custodyCatalog))

	// Custody ledger (SPEC §4).
	r.GET("/assets", s.api(s.listAssets))
	r.POST("/vaults", s.api(s.createVault))
	r.GET("/vaults", s.api(s.listVaults))
	r.GET("/vaults/:id", s.api(s.getVault))
	r.POST("/vaults/:id/wallets", s.api(s.createWallet))
	r.GET("/vaults/:id/wallets", s.api(s.listWallets))
	r.GET("/wallets/:id", s.api(s.getWallet))
	r.GET("/wallets/:id/balance", s.api(s.getBalance))
	r.POST("/transactions", s.api(s.createTransaction))
	r.GET("/transactions", s.api(s.listTransactions))
	r.GET("/transactions/:id", s.api(s.getTransaction))
	r.POST("/transactions/:id/advance", s.api(s.advanceTransaction))
	r.POST("/transactions/:id/fail", s.api(s.failTransaction))
	r.POST("/transactions/:id/cancel", s.api(s.cancelTransaction))
	r.POST("/sandbox/deposits", s.api(s.createDeposit))

	// Verification: levels (SPEC §3.1).
	r.GET("/v1/levels", s.api(s.listLevels))
	r.POST("/v1/levels", s.api(s.createLevel))
	r.GET("/v1/levels/:levelName", s.api(s.getLevel))
	r.PATCH("/v1/levels/:levelName", s.api(s.patchLevel))

	// Verification: applicants (SPEC §3.2–3.5). :id is the externalUserId.
	r.POST("/v1/applicants", s.api(s.createApplicant))
	r.GET("/v1/applicants", s.api(s.listApplicants))
	r.GET("/v1/applicants/:id", s.api(s.getApplicant))
	r.PATCH("/v1/applicants/:id", s.api(s.patchApplicant))
	r.DELETE("/v1/applicants/:id", s.api(s.eraseApplicant))
	r.GET("/v1/applicants/:id/company-info", s.api(s.getCompanyInfo))
	r.PATCH("/v1/applicants/:id/company-info", s.api(s.patchCompanyInfo))
	r.POST("/v1/applicants/:id/levels/:levelName", s.api(s.assignLevel))
	r.POST("/v1/applicants/:id/reset", s.api(s.resetApplicant))
	r.POST("/v1/applicants/:id/deactivate", s.api(s.deactivateApplicant))
	r.POST("/v1/applicants/:id/activate", s.api(s.activateApplicant))
	r.POST("/v1/applicants/:id/blocklist", s.api(s.blocklistApplicant))
	r.DELETE("/v1/applicants/:id/blocklist", s.api(s.unblocklistApplicant))
	r.POST("/v1/applicants/:id/monitoring", s.api(s.enableMonitoring))
	r.DELETE("/v1/applicants/:id/monitoring", s.api(s.disableMonitoring))
	r.POST("/v1/applicants/:id/review", s.api(s.sendToReview))
	r.GET("/v1/applicants/:id/status", s.api(s.applicantStatus))
	r.GET("/v1/applicants/:id/steps", s.api(s.applicantSteps))
	r.GET("/v1/applicants/:id/review-history", s.api(s.reviewHistory))
	r.POST("/v1/applicants/:id/verification-sessions", s.api(s.createSession))
	r.POST("/v1/applicants/:id/verify", s.api(s.verify))
	r.POST("/v1/applicants/:id/documents", s.api(s.addDocument))
	r.POST("/v1/applicants/:id/sandbox/review", s.api(s.sandboxReview))
	r.POST("/v1/admin/applicants/:id/decision", s.admin(s.decide))

	// Verification: company structure and beneficial-owner rows (SPEC §3.6).
	r.GET("/v1/applicants/:id/company-structure", s.api(s.getCompanyStructure))
	r.PATCH("/v1/applicants/:id/company-structure", s.api(s.patchCompanyStructure))
	r.POST("/v1/applicants/:id/ubos", s.api(s.addUbo))
	r.GET("/v1/applicants/:id/ubos", s.api(s.listUbos))
	r.GET("/v1/applicants/:id/ubos/:uboIndex", s.api(s.getUbo))
	r.PATCH("/v1/applicants/:id/ubos/:uboIndex", s.api(s.patchUbo))
	r.POST("/v1/applicants/:id/ubos/:uboIndex/spawn-kyc", s.api(s.spawnKYC))
	r.POST("/v1/applicants/:id/ubos/:uboIndex/regenerate-link", s.api(s.regenerateLink))
	r.GET("/v1/webhooks/events/catalog", s.api(s.kycCatalog))
	r.GET("/l/:code", s.public(s.shortLink))

	// Verification: hosted UI (SPEC §3.8, sdk.go). Pages and their no-JS
	// form posts carry the session token in the path; the page's API takes
	// it as Authorization: Bearer. Assets live beside /sdk/, not under it.
	ui := s.newSDKUI()
	r.GET("/sdk/:token", ui.page)
	r.GET("/sdk/:token/return", ui.returnTo)
	r.POST("/sdk/:token/personal-info", ui.postPersonalInfo)
	r.POST("/sdk/:token/documents", ui.postDocuments)
	r.POST("/sdk/:token/questionnaire", ui.postQuestionnaire)
	r.POST("/sdk/:token/ubos", ui.postUbo)
	r.POST("/sdk/:token/submit", ui.postSubmit)
	r.GET("/sdk-assets/*file", ui.asset)
	r.GET("/api/v1/sdk/state", s.sdkAPI(s.sdkState))
	r.POST("/api/v1/sdk/personal-info", s.sdkAPI(s.sdkPersonalInfo))
	r.POST("/api/v1/sdk/documents", s.sdkAPI(s.sdkDocuments))
	r.POST("/api/v1/sdk/questionnaire", s.sdkAPI(s.sdkQuestionnaire))
	r.POST("/api/v1/sdk/ubos", s.sdkAPI(s.sdkAddUbo))
	r.POST("/api/v1/sdk/submit", s.sdkAPI(s.sdkSubmit))

	// Console (SPEC §3.9): operator pages; sessions by cookie, CSRF on POST.
	c := s.newConsole()
	r.GET("/console", c.open(c.home))
	r.GET("/console/", c.open(c.toHome))
	r.GET("/console/login", c.open(c.loginPage))
	r.POST("/console/login", c.open(c.login))
	r.POST("/console/logout", c.page(c.logout))
	r.POST("/console/env", c.page(c.switchEnv))
	r.GET("/console/static/:file", c.open(c.staticFile))
	r.GET("/console/applicants", c.page(c.applicants))
	r.GET("/console/applicants/:id", c.page(c.applicant))
	r.GET("/console/applicants/:id/documents/:sha", c.page(c.document))
	r.POST("/console/applicants/:id/decision", c.page(c.decide))
	r.GET("/console/deliveries", c.page(c.deliveries))
	r.GET("/console/deliveries/:id", c.page(c.delivery))
	r.POST("/console/deliveries/:id/retry", c.page(c.retryDelivery))
	r.POST("/console/retry-deliveries", c.page(c.retryDeliveries))
	r.GET("/console/settings", c.page(c.settings))
	r.POST("/console/settings/webhook", c.page(c.setWebhook))
	r.POST("/console/settings/webhook/rotate", c.page(c.rotateWebhook))
	r.POST("/console/settings/callback", c.page(c.setCallback))
	r.POST("/console/settings/callback/rotate", c.page(c.rotateCallback))
	r.GET("/console/levels", c.page(c.levels))
	r.POST("/console/levels", c.page(c.createLevel))
	r.GET("/console/levels/:name", c.page(c.level))
	r.POST("/console/levels/:name", c.page(c.editLevel))
	r.GET("/console/credentials", c.page(c.credentials))
	r.POST("/console/credentials", c.page(c.createCredential))
	r.POST("/console/credentials/:key/revoke", c.page(c.revokeCredential))
	r.GET("/console/vaults", c.page(c.vaults))
	r.GET("/console/vaults/:id", c.page(c.vault))
	r.GET("/console/wallets/:id", c.page(c.wallet))
	r.GET("/console/transactions", c.page(c.transactions))
	r.GET("/console/transactions/:id", c.page(c.transaction))
}
