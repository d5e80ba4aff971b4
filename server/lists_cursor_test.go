package server_test

import (
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// cursorList is one list of the API that pages by cursor, with the item
// field that names an item.
type cursorList struct {
	name, path, field string
}

// firstCursor returns the nextCursor of the first page of path at limit=1,
// failing the test when there is none.
func (in *instance) firstCursor(path string, headers ...string) string {
	in.t.Helper()
	var l struct{ NextCursor *string }
	in.expect(200, "GET", path+"?limit=1", nil, headers...).json(in.t, &l)
	if l.NextCursor == nil {
		in.t.Fatalf("%s?limit=1: no nextCursor", path)
	}
	return *l.NextCursor
}

// refusesCursor fails the test unless GET path with cursor is 400 naming
// cursor.
func (in *instance) refusesCursor(path, cursor, what string, headers ...string) {
	in.t.Helper()
	r := in.do("GET", path+"?limit=1&cursor="+cursor, nil, headers...)
	if r.Status != 400 {
		in.t.Errorf("%s with %s: %d %s, want 400 naming cursor", path, what, r.Status, r.Body)
		return
	}
	e := r.m(in.t)["error"].(map[string]any)
	if e["field"] != "cursor" || e["code"] != "validation_failed" {
		in.t.Errorf("%s with %s: %s, want validation_failed naming cursor", path, what, r.Body)
	}
}

// TestCursorBelongsToItsList: a cursor pages only the list that returned
// it, in its environment. One of another list (or of the same list in the
// other environment) is 400 naming cursor, never a page starting anywhere;
// a list's own cursors page without gaps or repeats, also with other
// filters (a cursor is a position); and cursors handed out before cursors
// named their list (the bare 8-byte sequence) still page (SPEC §2 "Lists").
func TestCursorBelongsToItsList(t *testing.T) {
	in := start(t)
	in.configureWebhook(newReceiver(t, in.Clock, nil))
	var vaults []string
	for _, name := range []string{"v1", "v2", "v3"} {
		vaults = append(vaults, in.vault(name))
	}
	for _, symbol := range []string{"ETH", "BTC", "SOL"} {
		w := in.wallet(vaults[0], symbol)
		in.expect(201, "POST", "/sandbox/deposits", map[string]any{"walletId": w.WalletID, "amount": "1"})
	}
	for _, id := range []string{"a1", "a2", "a3"} {
		in.createApplicant(id, "Green")
	}
	in.expect(200, "POST", "/v1/applicants/a1/blocklist", nil)
	in.expect(200, "DELETE", "/v1/applicants/a1/blocklist", nil)
	in.createCompany("co", "Acme", map[string]any{"fullName": "Una", "roles": []string{"director"}},
		map[string]any{"fullName": "Dos", "roles": []string{"director"}}, map[string]any{"fullName": "Tres", "roles": []string{"director"}})

	lists := []cursorList{
		{"applicants", "/v1/applicants", "externalUserId"},
		{"ubos", "/v1/applicants/co/ubos", "fullName"},
		{"review history", "/v1/applicants/a1/review-history", "id"},
		{"levels", "/v1/levels", "name"},
		{"vaults", "/vaults", "vaultId"},
		{"wallets", "/vaults/" + vaults[0] + "/wallets", "walletId"},
		{"transactions", "/transactions", "transactionId"},
		{"deliveries", "/webhooks/deliveries", "id"},
		{"assets", "/assets", "id"},
		{"requests", "/v1/requests", "requestId"},
	}
	cursors := map[string]string{}
	for _, l := range lists {
		cursors[l.name] = in.firstCursor(l.path)
	}
	for _, l := range lists {
		for _, other := range lists {
			if other.name != l.name {
				in.refusesCursor(l.path, cursors[other.name], "a cursor of "+other.name)
			}
		}
		// Its own cursors page through every item once, in the order of
		// one big page.
		var all struct{ Items []map[string]any }
		in.expect(200, "GET", l.path+"?limit=200", nil).json(t, &all)
		var want []string
		for _, it := range all.Items {
			want = append(want, it[l.field].(string))
		}
		if got := in.pages(l.path+"?limit=1", l.field); len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("%s by pages of 1: %v, want %v", l.name, got, want)
		}
	}

	// A cursor is a position in its list: the same list with other filters
	// goes on below it.
	var deposits struct{ Items []map[string]any }
	in.expect(200, "GET", "/transactions?type=Deposit&cursor="+cursors["transactions"], nil).json(t, &deposits)
	if len(deposits.Items) != 2 {
		t.Errorf("deposits after the first transaction's cursor: %d, want 2", len(deposits.Items))
	}

	var created struct{ Items []map[string]any }
	in.expect(200, "GET", "/v1/applicants/a1/review-history?eventType=applicant.created&cursor="+cursors["review history"], nil).json(t, &created)
	if len(created.Items) != 1 {
		t.Errorf("a1's applicant.created after the newest entry's cursor: %v, want the one", created.Items)
	}
	// Another applicant's history is another list: its entries are not
	// there to go on from.
	in.refusesCursor("/v1/applicants/a2/review-history", cursors["review history"], "a cursor of a1's history")

	// The same list in the other environment refuses it.
	key, secret := in.credential(store.Production, store.RolePartner)
	prod := []string{"X-Api-Key", key, "X-Api-Secret", secret}
	for _, name := range []string{"p1", "p2"} {
		in.expect(201, "POST", "/vaults", map[string]any{"name": name, "externalId": "ext-" + name}, prod...)
	}
	for _, path := range []string{"/vaults", "/v1/levels", "/v1/requests"} {
		name := map[string]string{"/vaults": "vaults", "/v1/levels": "levels", "/v1/requests": "requests"}[path]
		in.refusesCursor(path, cursors[name], "a sandbox cursor", prod...)
		in.refusesCursor(path, in.firstCursor(path, prod...), "a production cursor")
	}
	// Except /assets, whose catalogue both environments share (the cursor
	// parameter's description): a sandbox cursor goes on from the same
	// asset in production, though each environment has its own asset ids.
	var prodAssets struct{ Items []struct{ Symbol string } }
	in.expect(200, "GET", "/assets?cursor="+cursors["assets"], nil, prod...).json(t, &prodAssets)
	var sbxAssets struct{ Items []struct{ Symbol string } }
	in.expect(200, "GET", "/assets?cursor="+cursors["assets"], nil).json(t, &sbxAssets)
	if len(sbxAssets.Items) == 0 || !slices.Equal(prodAssets.Items, sbxAssets.Items) {
		t.Errorf("production assets after a sandbox cursor: %v, want %v", prodAssets.Items, sbxAssets.Items)
	}

	// A cursor of the 8-byte form handed out before: vault 3's cursor
	// lists vaults 2 and 1.
	legacy := base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, 3))
	if got := in.pages("/vaults?cursor="+legacy, "vaultId"); !slices.Equal(got, []string{vaults[1], vaults[0]}) {
		t.Errorf("vaults after a legacy cursor: %v, want %v", got, vaults[:2])
	}
	if got := in.pages("/v1/applicants/co/ubos?cursor="+legacy, "fullName"); len(got) != 0 {
		t.Errorf("ubos after a legacy cursor of row 3: %v", got)
	}
	one := base64.RawURLEncoding.EncodeToString(binary.BigEndian.AppendUint64(nil, 1))
	if got := in.pages("/v1/applicants/co/ubos?cursor="+one, "fullName"); !slices.Equal(got, []string{"Dos", "Tres"}) {
		t.Errorf("ubos after a legacy cursor of row 1: %v", got)
	}
	for _, name := range []string{"applicants", "wallets", "transactions", "deliveries"} {
		i := slices.IndexFunc(lists, func(l cursorList) bool { return l.name == name })
		b, err := base64.RawURLEncoding.DecodeString(cursors[name])
		if err != nil || len(b) < 8 {
			t.Fatalf("%s cursor %q", name, cursors[name])
		}
		old := base64.RawURLEncoding.EncodeToString(b[len(b)-8:]) // its sequence alone
		got := in.pages(lists[i].path+"?cursor="+old, lists[i].field)
		if want := in.pages(lists[i].path+"?cursor="+cursors[name], lists[i].field); len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s after the legacy form of its cursor: %v, want %v", name, got, want)
		}
	}

	// The document says so on every list.
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []map[string]any
		}
	}
	in.expect(200, "GET", "/openapi.json", nil).json(t, &doc)
	for _, l := range lists {
		path := strings.NewReplacer("/co/", "/{id}/", "/a1/", "/{id}/", vaults[0], "{id}").Replace(l.path)
		if ps := doc.Paths[path]["get"].Parameters; !slices.ContainsFunc(ps, func(p map[string]any) bool { return p["$ref"] == "#/components/parameters/Cursor" }) {
			t.Errorf("GET %s: cursor is not the shared Cursor parameter: %v", path, ps)
		}
	}

	// The console's lists refuse one too, and page with their own.
	op := in.operator()
	expectStatus(t, "console vaults with a transactions cursor", op.get("/console/vaults?cursor="+cursors["transactions"]), 400)
	expectStatus(t, "console transactions with a vaults cursor", op.get("/console/transactions?cursor="+cursors["vaults"]), 400)
	expectStatus(t, "console applicants with a deliveries cursor", op.get("/console/applicants?cursor="+cursors["deliveries"]), 400)
	expectStatus(t, "console deliveries with an applicants cursor", op.get("/console/deliveries?cursor="+cursors["applicants"]), 400)
	if p := op.page("/console/vaults?limit=1&cursor="+cursors["vaults"], vaults[1], "Next page"); strings.Contains(p, vaults[2]) {
		t.Errorf("the console's second page of vaults lists the first page's %s", vaults[2])
	}
	if p := op.page("/console/applicants?limit=1&cursor="+cursors["applicants"], ">a3<", "Next page"); strings.Contains(p, ">co<") {
		t.Error("the console's second page of applicants lists the first page's co")
	}
}

// TestListParameterGivenTwice: a list reads one value of each parameter,
// so a second one (which would be dropped silently: limit=1&limit=500 read
// as 1, a second status filter ignored) is a 400 naming it, on the API as
// in the console.
func TestListParameterGivenTwice(t *testing.T) {
	t.Parallel()
	in := start(t)
	in.createApplicant("lp-1", "Doe")
	for _, c := range []struct{ path, field string }{
		{"/v1/applicants?limit=1&limit=500", "limit"},
		{"/v1/applicants?reviewStatus=pending&reviewStatus=completed", "reviewStatus"},
		{"/webhooks/deliveries?status=dead&status=failed", "status"},
		{"/transactions?limit=5&walletId=a&walletId=b", "walletId"},
		{"/vaults?cursor=&cursor=", "cursor"},
		{"/v1/applicants/lp-1/review-history?eventType=applicant.created&eventType=aml.run", "eventType"},
		{"/v1/applicants/lp-1/review-history?since=2026-01-01&since=2027-01-01", "since"},
	} {
		r := in.do("GET", c.path, nil)
		if r.Status != 400 {
			t.Errorf("GET %s: %d, want 400 naming %s", c.path, r.Status, c.field)
			continue
		}
		if code, field := errField(t, r); code != "validation_failed" || field != c.field {
			t.Errorf("GET %s: %d %s %q, want 400 naming %s", c.path, r.Status, code, field, c.field)
		}
	}
	in.expect(200, "GET", "/v1/applicants?limit=1&reviewStatus=pending", nil)
	b := in.operator()
	expectStatus(t, "console list with status twice", b.get("/console/deliveries?status=dead&status=failed"), http.StatusBadRequest)
}
