package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/complybox/complybox/server/console"
	"github.com/complybox/complybox/server/hostedui"
)

// routes lists every route of complybox, the API, the hosted UI and the
// console: the binary can be read in one place. api(...) requires X-Api-Key
// and X-Api-Secret; admin(...) also the admin role; public(...) requires
// nothing. ui.API(...) requires the hosted-UI session token as a Bearer;
// c.Page(...) a console session (and CSRF and the page's environment on
// POST), c.AnyEnv(...) the same without the environment, c.Open(...)
// nothing.
func (s *Server) routes() {
	r := routeTable{s}
	ui := hostedui.New(s.store, s.log).WithBranding(s.cfg.Branding).WithQuality(s.cfg.Quality)
	c := console.New(s.store, s.cfg.PublicURL, s.log)
	s.console = c // its error page answers what reaches no route under /console
	s.hosted = ui
	rp := c.RequestPages(s.reqlog)
	cp := c.ClockPages(s.disp)

	// Process.
	r.GET("/healthz", s.public(s.healthz))
	r.GET("/openapi.json", s.public(s.openapi))
	if s.metrics != nil {
		r.GET("/metrics", s.public(s.serveMetrics))
	}
	r.GET("/favicon.ico", ui.Favicon) // the icon of the hosted UI and the console
	r.GET("/v1/admin/backup", s.admin(s.backup))

	// Sandbox tools and operations (SPEC §7).
	r.GET("/v1/requests", s.api(s.listRequests))
	r.GET("/v1/requests/:requestId", s.api(s.getRequest))
	r.GET("/v1/sandbox/clock", s.api(s.getClock))
	r.POST("/v1/sandbox/clock", s.api(s.moveClock))

	// Custody webhooks (seed 001 §4).
	r.PUT("/webhooks/outbound", s.api(s.putWebhook))
	r.GET("/webhooks/outbound", s.api(s.getWebhook))
	r.POST("/webhooks/outbound/test", s.api(s.testWebhook))
	r.GET("/webhooks/deliveries", s.api(s.listDeliveries))
	r.GET("/webhooks/deliveries/:id", s.api(s.getDelivery))
	r.POST("/webhooks/deliveries/:id", s.api(s.postDeliveries)) // POST /webhooks/deliveries/retry, the bulk retry: the only :id it serves
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

	// Verification: applicant events (SPEC §3.7) and short links (§3.4).
	r.GET("/v1/webhooks/events/catalog", s.api(s.kycCatalog))
	r.POST("/v1/webhooks/test", s.api(s.testCallback))
	r.GET("/l/:code", ui.ShortLink)

	// Verification: hosted UI (SPEC §3.8, package hostedui). Pages and their
	// no-JS form posts carry the session token in the path; the page's API
	// takes it as Authorization: Bearer. Assets live beside /sdk/, not under it.
	r.GET("/sdk/:token", ui.Page)
	r.GET("/sdk/:token/return", ui.Return)
	r.POST("/sdk/:token/consent", ui.PostConsent)
	r.POST("/sdk/:token/personal-info", ui.PostPersonalInfo)
	r.POST("/sdk/:token/documents", ui.PostDocuments)
	r.POST("/sdk/:token/questionnaire", ui.PostQuestionnaire)
	r.POST("/sdk/:token/ubos", ui.PostUbo)
	r.POST("/sdk/:token/submit", ui.PostSubmit)
	// A form's address opened with GET (the address bar after a form's
	// error): back to the page.
	r.GET("/sdk/:token/consent", ui.FormAddress)
	r.GET("/sdk/:token/personal-info", ui.FormAddress)
	r.GET("/sdk/:token/documents", ui.FormAddress)
	r.GET("/sdk/:token/questionnaire", ui.FormAddress)
	r.GET("/sdk/:token/ubos", ui.FormAddress)
	r.GET("/sdk/:token/submit", ui.FormAddress)
	r.GET("/sdk-assets/*file", ui.Asset)
	r.GET("/api/v1/sdk/state", ui.API(ui.State))
	r.POST("/api/v1/sdk/personal-info", ui.API(ui.PersonalInfo))
	r.POST("/api/v1/sdk/documents", ui.API(ui.Documents))
	r.POST("/api/v1/sdk/questionnaire", ui.API(ui.Questionnaire))
	r.POST("/api/v1/sdk/ubos", ui.API(ui.AddUbo))
	r.POST("/api/v1/sdk/submit", ui.API(ui.Submit))

	// Console (SPEC §3.9, package console): operator pages; sessions by
	// cookie, CSRF on POST and the environment the form was shown in
	// (c.AnyEnv: the switch and log out go without); c.Admin(...) also the
	// admin role (a reviewer gets 403).
	r.GET("/console", c.Open(c.Home))
	r.GET("/console/", c.Open(c.ToHome))
	r.GET("/console/login", c.Open(c.LoginPage))
	r.POST("/console/login", c.Open(c.Login))
	r.POST("/console/logout", c.AnyEnv(c.Logout))
	r.GET("/console/logout", c.AnyEnv(c.FormAddress("/console")))
	r.POST("/console/env", c.AnyEnv(c.SwitchEnv))
	r.GET("/console/env", c.AnyEnv(c.FormAddress("/console")))
	r.GET("/console/static/:file", c.Open(c.StaticFile))
	r.GET("/console/applicants", c.Page(c.Applicants))
	r.GET("/console/applicants/:id", c.Page(c.Applicant))
	r.GET("/console/applicants/:id/documents/:sha", c.Page(c.Document))
	r.POST("/console/applicants/:id/decision", c.Page(c.Decide))
	r.GET("/console/applicants/:id/decision", c.Page(c.FormAddress("/console/applicants/:id")))
	r.GET("/console/deliveries", c.Page(c.Deliveries))
	r.GET("/console/deliveries/:id", c.Page(c.Delivery))
	r.POST("/console/deliveries/:id/retry", c.Page(c.RetryDelivery))
	r.GET("/console/deliveries/:id/retry", c.Page(c.FormAddress("/console/deliveries/:id")))
	r.POST("/console/retry-deliveries", c.Page(c.RetryDeliveries))
	r.GET("/console/retry-deliveries", c.Page(c.FormAddress("/console/deliveries")))
	r.GET("/console/settings", c.Admin(c.Settings))
	r.POST("/console/settings/webhook", c.Admin(c.SetWebhook))
	r.POST("/console/settings/webhook/rotate", c.Admin(c.RotateWebhook))
	r.POST("/console/settings/callback", c.Admin(c.SetCallback))
	r.POST("/console/settings/callback/rotate", c.Admin(c.RotateCallback))
	r.POST("/console/settings/webhook/test", c.Admin(c.TestWebhook))
	r.POST("/console/settings/callback/test", c.Admin(c.TestCallback))
	r.GET("/console/settings/webhook", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/settings/webhook/rotate", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/settings/callback", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/settings/callback/rotate", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/settings/webhook/test", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/settings/callback/test", c.Admin(c.FormAddress("/console/settings")))
	r.GET("/console/shown", c.Admin(c.Shown))
	r.GET("/console/levels", c.Admin(c.Levels))
	r.POST("/console/levels", c.Admin(c.CreateLevel))
	r.GET("/console/levels/:name", c.Admin(c.Level))
	r.POST("/console/levels/:name", c.Admin(c.EditLevel))
	r.GET("/console/credentials", c.Admin(c.Credentials))
	r.POST("/console/credentials", c.Admin(c.CreateCredential))
	r.POST("/console/credentials/:key/revoke", c.Admin(c.RevokeCredential))
	r.GET("/console/credentials/:key/revoke", c.Admin(c.FormAddress("/console/credentials")))
	r.GET("/console/operators", c.Admin(c.Operators))
	r.POST("/console/operators", c.Admin(c.AddOperator))
	r.POST("/console/operators/:name/role", c.Admin(c.SetOperatorRole))
	r.POST("/console/operators/:name/remove", c.Admin(c.RemoveOperator))
	r.GET("/console/operators/:name/role", c.Admin(c.FormAddress("/console/operators")))
	r.GET("/console/operators/:name/remove", c.Admin(c.FormAddress("/console/operators")))
	r.GET("/console/vaults", c.Page(c.Vaults))
	r.GET("/console/vaults/:id", c.Page(c.Vault))
	r.GET("/console/wallets/:id", c.Page(c.Wallet))
	r.GET("/console/transactions", c.Page(c.Transactions))
	r.GET("/console/transactions/:id", c.Page(c.Transaction))
	r.GET("/console/requests", c.Page(rp.List))
	r.GET("/console/requests/:id", c.Page(rp.Detail))
	r.GET("/console/clock", c.Admin(cp.Show))
	r.POST("/console/clock", c.Admin(cp.Move))
}

// routeTable registers routes on the Server's router, each handler told its
// route pattern for the metrics' route label.
type routeTable struct{ s *Server }

// GET registers a GET route (ServeHTTP answers HEAD with it).
func (t routeTable) GET(path string, h httprouter.Handle) { t.s.router.GET(path, named(path, h)) }

// POST registers a POST route.
func (t routeTable) POST(path string, h httprouter.Handle) { t.s.router.POST(path, named(path, h)) }

// PUT registers a PUT route.
func (t routeTable) PUT(path string, h httprouter.Handle) { t.s.router.PUT(path, named(path, h)) }

// PATCH registers a PATCH route.
func (t routeTable) PATCH(path string, h httprouter.Handle) { t.s.router.PATCH(path, named(path, h)) }

// DELETE registers a DELETE route.
func (t routeTable) DELETE(path string, h httprouter.Handle) { t.s.router.DELETE(path, named(path, h)) }

// named sets the route pattern on the request's statusRecorder.
func named(pattern string, h httprouter.Handle) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if rec, ok := w.(*statusRecorder); ok {
			rec.route = pattern
		}
		h(w, r, ps)
	}
}
