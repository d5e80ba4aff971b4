package server

import (
	"net/http"
)

// Placeholders until the custody ledger lands; each answers 500.

func (s *Server) listAssets(w http.ResponseWriter, r *request) error         { return notYet(w, r) }
func (s *Server) createVault(w http.ResponseWriter, r *request) error        { return notYet(w, r) }
func (s *Server) listVaults(w http.ResponseWriter, r *request) error         { return notYet(w, r) }
func (s *Server) getVault(w http.ResponseWriter, r *request) error           { return notYet(w, r) }
func (s *Server) createWallet(w http.ResponseWriter, r *request) error       { return notYet(w, r) }
func (s *Server) listWallets(w http.ResponseWriter, r *request) error        { return notYet(w, r) }
func (s *Server) getWallet(w http.ResponseWriter, r *request) error          { return notYet(w, r) }
func (s *Server) getBalance(w http.ResponseWriter, r *request) error         { return notYet(w, r) }
func (s *Server) createTransaction(w http.ResponseWriter, r *request) error  { return notYet(w, r) }
func (s *Server) listTransactions(w http.ResponseWriter, r *request) error   { return notYet(w, r) }
func (s *Server) getTransaction(w http.ResponseWriter, r *request) error     { return notYet(w, r) }
func (s *Server) advanceTransaction(w http.ResponseWriter, r *request) error { return notYet(w, r) }
func (s *Server) failTransaction(w http.ResponseWriter, r *request) error    { return notYet(w, r) }
func (s *Server) cancelTransaction(w http.ResponseWriter, r *request) error  { return notYet(w, r) }
func (s *Server) createDeposit(w http.ResponseWriter, r *request) error      { return notYet(w, r) }
