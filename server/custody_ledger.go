package server

import (
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// idem reads the Idempotency-Key header with the hash of the body.
func idem(r *request, body []byte) store.Idem {
	key := r.Header.Get("Idempotency-Key")
	if key == "" {
		return store.Idem{}
	}
	return store.Idem{Key: key, BodyHash: bodyHash(body)}
}

// decodeIdem reads the body into v and returns the request's idempotency
// key with the body's hash.
func decodeIdem(r *request, v any) (store.Idem, error) {
	b, err := wire.ReadBody(r.Request)
	if err != nil {
		return store.Idem{}, err
	}
	if utf8.RuneCountInString(r.Header.Get("Idempotency-Key")) > 255 {
		return store.Idem{}, store.Invalid("Idempotency-Key", "Idempotency-Key is longer than 255 characters")
	}
	return idem(r, b), wire.DecodeBytes(b, v)
}

// canonical writes each id given in a body as store.CanonicalID has it.
func canonical(ids ...*string) {
	for _, id := range ids {
		if id != nil {
			*id = store.CanonicalID(*id)
		}
	}
}

func (s *Server) listAssets(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, err := s.store.Assets(r.env)
	if err != nil {
		return err
	}
	items, next, err := assetPage(items, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

// assetPageCursor marks an asset page cursor: the symbol of the last asset
// of the previous page. Both environments list the same catalogue under
// their own asset ids, so a symbol pages either (the cursor parameter's
// description says so); an id, which cursors named before, still pages its
// own environment.
const assetPageCursor = "asset:"

// assetPage is one page of the catalog in its own order (SPEC §2 lists).
func assetPage(all []store.Asset, p store.Page) ([]store.Asset, *string, error) {
	from := 0
	if p.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
		last, ok := strings.CutPrefix(string(b), assetPageCursor)
		i := slices.IndexFunc(all, func(a store.Asset) bool { return a.Symbol == last || a.ID == last })
		if err != nil || !ok || i < 0 {
			return nil, nil, store.Invalid("cursor", "cursor is not one this service returned")
		}
		from = i + 1
	}
	items := all[from:]
	if len(items) <= p.Limit {
		return items, nil, nil
	}
	items = items[:p.Limit]
	next := base64.RawURLEncoding.EncodeToString([]byte(assetPageCursor + items[len(items)-1].Symbol))
	return items, &next, nil
}

func (s *Server) createVault(w http.ResponseWriter, r *request) error {
	var in store.VaultInput
	key, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	v, err := s.store.CreateVault(r.env, in, key)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/vaults/"+v.VaultID)
	s.encode(w, http.StatusCreated, v)
	return nil
}

func (s *Server) listVaults(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := s.store.Vaults(r.env, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

func (s *Server) getVault(w http.ResponseWriter, r *request) error {
	v, err := s.store.Vault(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, v)
	return nil
}

func (s *Server) createWallet(w http.ResponseWriter, r *request) error {
	var in store.WalletInput
	key, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	canonical(in.AssetID)
	wl, err := s.store.CreateWallet(r.env, r.id(), in, key)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/wallets/"+wl.WalletID)
	s.encode(w, http.StatusCreated, wl)
	return nil
}

func (s *Server) listWallets(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	items, next, err := s.store.VaultWallets(r.env, r.id(), p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

func (s *Server) getWallet(w http.ResponseWriter, r *request) error {
	wl, err := s.store.Wallet(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, wl)
	return nil
}

func (s *Server) getBalance(w http.ResponseWriter, r *request) error {
	b, err := s.store.WalletBalance(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, b)
	return nil
}

func (s *Server) createTransaction(w http.ResponseWriter, r *request) error {
	var in store.TransactionInput
	key, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	canonical(in.SourceWalletID, in.DestinationWalletID)
	x, rec, err := s.store.CreateTransactionJSON(r.env, in, key)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/transactions/"+x.TransactionID)
	s.created(w, x, rec)
	return nil
}

func (s *Server) createDeposit(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	var in store.DepositInput
	key, err := decodeIdem(r, &in)
	if err != nil {
		return err
	}
	canonical(in.WalletID)
	x, rec, err := s.store.CreateDepositJSON(r.env, in, key)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/transactions/"+x.TransactionID)
	s.created(w, x, rec)
	return nil
}

// created answers 201 with a new transaction: the bytes of its record when
// the store returned them (the draft's, byte for byte what GET
// /transactions/{id} answers), else x encoded (an idempotent replay).
func (s *Server) created(w http.ResponseWriter, x store.Transaction, rec []byte) {
	if rec != nil {
		wire.RawJSON(w, http.StatusCreated, rec)
		return
	}
	s.encode(w, http.StatusCreated, x)
}

func (s *Server) listTransactions(w http.ResponseWriter, r *request) error {
	p, err := wire.Page(r.Request)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := store.TransactionFilter{VaultID: store.CanonicalID(q.Get("vaultId")), Status: q.Get("status"), Type: q.Get("type"),
		WalletID: store.CanonicalID(q.Get("walletId"))}
	items, next, err := s.store.Transactions(r.env, f, p)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, newList(items, next))
	return nil
}

// getTransaction passes the stored record's bytes on unchanged: it is the
// hottest read of the custody side.
func (s *Server) getTransaction(w http.ResponseWriter, r *request) error {
	b, err := s.store.TransactionJSON(r.env, r.id())
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)+1))
	w.WriteHeader(http.StatusOK)
	w.Write(append(b, '\n'))
	return nil
}

// advanceTransaction is a simulator control: sandbox only.
func (s *Server) advanceTransaction(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	x, err := s.store.AdvanceTransaction(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, x)
	return nil
}

// failTransaction is a simulator control: sandbox only.
func (s *Server) failTransaction(w http.ResponseWriter, r *request) error {
	if err := sandboxOnly(r); err != nil {
		return err
	}
	var in struct {
		Reason *string `json:"reason"`
	}
	if err := wire.Decode(r.Request, &in); err != nil {
		return err
	}
	x, err := s.store.FailTransaction(r.env, r.id(), in.Reason)
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, x)
	return nil
}

func (s *Server) cancelTransaction(w http.ResponseWriter, r *request) error {
	if err := noBody(r); err != nil {
		return err
	}
	x, err := s.store.CancelTransaction(r.env, r.id())
	if err != nil {
		return err
	}
	s.encode(w, http.StatusOK, x)
	return nil
}
