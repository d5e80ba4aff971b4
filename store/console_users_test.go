package store_test

import (
	"testing"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/complybox/complybox/store"
)

// TestConsoleUsers: named operator accounts with roles; the last admin
// stays; removing an operator ends its sessions; a decision in the console
// records who made it.
func TestConsoleUsers(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t, "", store.Options{PasswordCost: bcrypt.MinCost})
	if _, err := s.ConsoleLogin("admin", "whatever1", "127.0.0.1"); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("login before any account: %v", err)
	}
	if err := s.SetConsolePassword("admin password"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddConsoleUser("rita", store.ConsoleReviewer, "reviewer pw", "admin"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, role, pw, field string }{
		{"Rita Big", store.ConsoleReviewer, "long enough", "name"},
		{"bob", "owner", "long enough", "role"},
		{"bob", store.ConsoleAdmin, "short", "password"},
	} {
		_, err := s.AddConsoleUser(c.name, c.role, c.pw, "admin")
		if e := store.AsError(err); e.Code != store.EINVALID || e.Field != c.field {
			t.Errorf("add %+v: %v, want EINVALID %s", c, err, c.field)
		}
	}
	if _, err := s.AddConsoleUser("rita", store.ConsoleAdmin, "reviewer pw", "admin"); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("second rita: %v", err)
	}

	sess, err := s.ConsoleLogin("rita", "reviewer pw", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if sess.Operator != "rita" || sess.Role != store.ConsoleReviewer || sess.IsAdmin() {
		t.Fatalf("session %+v", sess)
	}
	if _, err := s.ConsoleLogin("rita", "admin password", "127.0.0.2"); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("rita with admin's password: %v", err)
	}
	if _, err := s.ConsoleLogin("nobody", "reviewer pw", "127.0.0.2"); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("unknown name: %v", err)
	}

	// A role change holds for the live session at once.
	if _, err := s.SetConsoleUserRole("rita", store.ConsoleAdmin, "admin"); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ConsoleSessionByID(sess.ID); err != nil || !got.IsAdmin() {
		t.Fatalf("after promotion: %+v, %v", got, err)
	}
	// The last admin keeps the role and the account.
	if err := s.RemoveConsoleUser("admin", "rita"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConsoleUserRole("rita", store.ConsoleReviewer, "rita"); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("demote the last admin: %v", err)
	}
	if err := s.RemoveConsoleUser("rita", "rita"); store.ErrorCode(err) != store.ECONFLICT {
		t.Fatalf("remove the last admin: %v", err)
	}
	if _, err := s.AddConsoleUser("bob", store.ConsoleAdmin, "bob's password", "rita"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveConsoleUser("rita", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsoleSessionByID(sess.ID); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("a removed operator's session: %v", err)
	}
	// The same name added again does not revive the old session.
	if _, err := s.AddConsoleUser("rita", store.ConsoleReviewer, "reviewer pw", "bob"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ConsoleSessionByID(sess.ID); store.ErrorCode(err) != store.EUNAUTHORIZED {
		t.Fatalf("the old session came back: %v", err)
	}
	users, err := s.ConsoleUsers()
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Name != "bob" || users[0].Role != store.ConsoleAdmin || users[1].Name != "rita" || users[1].Role != store.ConsoleReviewer {
		t.Fatalf("users %+v", users)
	}
	activity, err := s.ConsoleActivity(store.Sandbox)
	if err != nil {
		t.Fatal(err)
	}
	var removed bool
	for _, e := range activity {
		if e.EventType == "console.operator_removed" && e.Details["name"] == "rita" && e.Details["operator"] == "bob" {
			removed = true
		}
	}
	if !removed {
		t.Fatalf("no console.operator_removed of rita by bob in %+v", activity)
	}
}

// TestConsolePasswordMigrated: the single password of earlier versions is
// the admin account "admin" after the upgrade; its old sessions end.
func TestConsolePasswordMigrated(t *testing.T) {
	t.Parallel()
	s, _ := mustOpen(t, "", store.Options{PasswordCost: bcrypt.MinCost})
	hash, err := bcrypt.GenerateFromPassword([]byte("old password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(func(tx *bolt.Tx) error {
		b, err := tx.Bucket([]byte("meta")).CreateBucketIfNotExists([]byte("console"))
		if err != nil {
			return err
		}
		if err := b.Put([]byte("session:legacy"), []byte(`{"csrf":"x","env":"sandbox","expiresAt":"2999-01-01T00:00:00.000Z"}`)); err != nil {
			return err
		}
		return b.Put([]byte("password"), hash)
	}); err != nil {
		t.Fatal(err)
	}
	if set, err := s.ConsolePasswordSet(); err != nil || !set {
		t.Fatalf("legacy password set: %v %v", set, err)
	}
	if users, err := s.ConsoleUsers(); err != nil || len(users) != 1 || users[0].Name != "admin" || users[0].Role != store.ConsoleAdmin {
		t.Fatalf("before the first login: %+v %v", users, err)
	}
	sess, err := s.ConsoleLogin("admin", "old password", "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if !sess.IsAdmin() || sess.Operator != "admin" {
		t.Fatalf("session %+v", sess)
	}
	if users, err := s.ConsoleUsers(); err != nil || len(users) != 1 || users[0].CreatedAt.IsZero() {
		t.Fatalf("after the first login: %+v %v", users, err)
	}
	if _, err := s.ConsoleLogin("admin", "old password", "127.0.0.1"); err != nil {
		t.Fatalf("second login: %v", err)
	}
}
