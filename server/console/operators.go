package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

// Operator accounts (admins only): list, add, change a role, remove. The
// command line does the same with `complybox console user …`.

// Operators serves GET /console/operators.
func (c *Console) Operators(w http.ResponseWriter, r *Request) error {
	return c.operatorsPage(w, r, http.StatusOK, nil)
}

// operatorForm is the add form as posted, shown again with its error.
type operatorForm struct {
	Name, Role, Err, ErrField string
}

func (c *Console) operatorsPage(w http.ResponseWriter, r *Request, status int, form *operatorForm) error {
	users, err := c.store.ConsoleUsers()
	if err != nil {
		return err
	}
	if form == nil {
		form = &operatorForm{Role: store.ConsoleReviewer}
	}
	return c.render(w, r, status, "operators", "Operators", "operators", map[string]any{
		"Users": users, "Form": form, "Roles": []string{store.ConsoleReviewer, store.ConsoleAdmin}, "Me": r.sess.Operator})
}

// AddOperator serves POST /console/operators: name, role, password and
// its repetition. A refused form is shown again with the error beside
// the field (400, 409 for a taken name).
func (c *Console) AddOperator(w http.ResponseWriter, r *Request) error {
	f := r.PostForm
	form := &operatorForm{Name: strings.ToLower(strings.TrimSpace(f.Get("name"))), Role: f.Get("role")}
	password := f.Get("password")
	if password != f.Get("password2") {
		form.Err, form.ErrField = "The two passwords differ.", "password2"
		return c.operatorsPage(w, r, http.StatusBadRequest, form)
	}
	if _, err := c.store.AddConsoleUser(form.Name, form.Role, password, r.sess.Operator); err != nil {
		e := store.AsError(err)
		switch e.Code {
		case store.EINVALID:
			form.Err, form.ErrField = e.Message, e.Field
			return c.operatorsPage(w, r, wire.Status(err), form)
		case store.ECONFLICT:
			form.Err, form.ErrField = e.Message, "name"
			return c.operatorsPage(w, r, wire.Status(err), form)
		}
		return err
	}
	return redirect(w, r, "/console/operators", "operator")
}

// SetOperatorRole serves POST /console/operators/:name/role.
func (c *Console) SetOperatorRole(w http.ResponseWriter, r *Request) error {
	if _, err := c.store.SetConsoleUserRole(r.params.ByName("name"), r.PostForm.Get("role"), r.sess.Operator); err != nil {
		return err
	}
	return redirect(w, r, "/console/operators", "operator")
}

// RemoveOperator serves POST /console/operators/:name/remove; removing
// oneself ends one's own session too.
func (c *Console) RemoveOperator(w http.ResponseWriter, r *Request) error {
	name := r.params.ByName("name")
	if err := c.store.RemoveConsoleUser(name, r.sess.Operator); err != nil {
		return err
	}
	if name == r.sess.Operator {
		http.SetCookie(w, c.cookie(consoleCookie, "", -1))
		return redirect(w, r, "/console/login", "")
	}
	return redirect(w, r, "/console/operators?removed="+url.QueryEscape(name), "removed")
}
