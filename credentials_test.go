package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestCredentialsCommands(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	out := mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox", "--name", "ci")
	key := regexp.MustCompile(`(?m)^key\s+(\S+)$`).FindStringSubmatch(out)
	secret := regexp.MustCompile(`(?m)^secret\s+(\S+)$`).FindStringSubmatch(out)
	if key == nil || secret == nil || !strings.HasPrefix(key[1], "sbx_key_") {
		t.Fatalf("credentials create printed:\n%s", out)
	}
	adminOut := mustRun(t, "credentials", "create", "--db", db, "--env", "production", "--role", "admin")
	if !strings.Contains(adminOut, "prd_key_") || !regexp.MustCompile(`(?m)^role\s+admin$`).MatchString(adminOut) {
		t.Fatalf("credentials create --role admin printed:\n%s", adminOut)
	}

	list := mustRun(t, "credentials", "list", "--db", db)
	rows := strings.Split(strings.TrimSpace(list), "\n")
	// Both were created in the same millisecond or not: find the row by key.
	if len(rows) != 3 || !strings.HasPrefix(rows[0], "KEY") || !strings.Contains(rowOf(list, key[1]), "ci") {
		t.Fatalf("credentials list:\n%s", list)
	}
	if strings.Contains(list, secret[1]) {
		t.Fatal("credentials list shows a secret")
	}

	// The credential works against a server on that db...
	s := startServe(t, db)
	if s.Key != "" {
		t.Fatalf("first-run credential printed although the db holds some")
	}
	if status, body := call(t, "GET", s.URL+"/webhooks/outbound", key[1], secret[1], nil); status != 200 {
		t.Fatalf("created credential: %d %s", status, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}

	// ...and gets 401 once revoked.
	if out := mustRun(t, "credentials", "revoke", "--db", db, key[1]); !strings.Contains(out, "revoked "+key[1]) {
		t.Fatalf("revoke printed %q", out)
	}
	list = mustRun(t, "credentials", "list", "--db", db)
	if row := rowOf(list, key[1]); row == "" || strings.HasSuffix(strings.TrimSpace(row), "-") {
		t.Fatalf("revoked credential listed without a revocation time: %q", row)
	}
	s = startServe(t, db)
	if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", key[1], secret[1], nil); status != 401 {
		t.Fatalf("revoked credential: status %d, want 401", status)
	}

	t.Run("ErrInUse", func(t *testing.T) {
		r := runCmd(t, "credentials", "list", "--db", db)
		wantErr(t, r.err(), "in use")
		// The message says what to do about it.
		wantErr(t, r.err(), "stop the server first, or copy a running server's db with GET /v1/admin/backup")
		// So does a second serve on the address the first one holds.
		r = runCmd(t, "serve", "--listen", strings.TrimPrefix(s.URL, "http://"), "--db", filepath.Join(t.TempDir(), "other.db"))
		wantErr(t, r.err(), "choose another address with --listen")
	})
	t.Run("ErrUsage", func(t *testing.T) {
		r := runCmd(t, "credentials", "create", "--db", db)
		wantErr(t, r.err(), "--env")
		if r.code != 2 {
			t.Fatalf("exit code %d, want 2", r.code)
		}
		r = runCmd(t, "credentials", "revoke", "--db", db)
		if r.code != 2 {
			t.Fatalf("revoke without KEY: %v (exit %d), want a usage error", r.stderr, r.code)
		}
	})
	s.stop()
	t.Run("ErrBadValues", func(t *testing.T) {
		r := runCmd(t, "credentials", "create", "--db", db, "--env", "staging")
		wantErr(t, r.err(), "environment")
		r = runCmd(t, "credentials", "create", "--db", db, "--env", "sandbox", "--role", "root")
		wantErr(t, r.err(), "role")
		r = runCmd(t, "credentials", "revoke", "--db", db, "sbx_key_nope")
		wantErr(t, r.err(), "sbx_key_nope")
		// A name is one cell of the list: a line break would forge a row
		// (here a production admin), a tab a column.
		before := mustRun(t, "credentials", "list", "--db", db)
		for _, name := range []string{"x\nprd_key_forged production admin root 2026-01-01T00:00:00.000Z -", "a\tb"} {
			r = runCmd(t, "credentials", "create", "--db", db, "--env", "sandbox", "--name", name)
			wantErr(t, r.err(), "name contains a control character")
		}
		if after := mustRun(t, "credentials", "list", "--db", db); after != before {
			t.Fatalf("refused names changed the list:\n%s", after)
		}
		// A configured credential's name is checked as well, at start-up.
		cfg := writeConfig(t, "[[credentials]]\nkey = \"sbx_key_cfgname\"\nsecret = \"a-secret-of-enough-length-0123456789\"\nname = \"line1\\nline2\"\n")
		cfgDB := filepath.Join(t.TempDir(), "cfg.db")
		r = runCmd(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--db", cfgDB)
		if r.code != 1 || !strings.Contains(r.stderr, "credentials[0].name") || !strings.Contains(r.stderr, "name contains a control character") {
			t.Fatalf("a configured name with a line break: exit %d, stderr %q", r.code, r.stderr)
		}
		// Refused with the config, before the db is made or written.
		if _, err := os.Stat(cfgDB); err == nil {
			t.Fatal("a refused config made its db")
		}
	})
}

// TestCredentialsCreateUnprinted: a credential whose secret could not be
// printed is not kept, so no live credential has a secret nobody saw.
func TestCredentialsCreateUnprinted(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "complybox.db")
	code, stderr := runFailingStdout(t, "credentials", "create", "--db", db, "--env", "sandbox")
	if code != 1 || !strings.Contains(stderr, "no space left on device") {
		t.Fatalf("exit code %d, stderr %q; want 1 naming the failure", code, stderr)
	}
	assertCredentials(t, db)
}

// rowOf returns the row of `credentials list` output that starts with key,
// "" when there is none.
func rowOf(list, key string) string {
	for _, row := range strings.Split(list, "\n") {
		if strings.HasPrefix(row, key+" ") {
			return row
		}
	}
	return ""
}

// TestConfiguredCredentialStaysRevoked: a key the config file declares,
// revoked with the CLI, answers 401 after the next start with the same file
// (which warns about it), as `revoke` promises.
func TestConfiguredCredentialStaysRevoked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	cfg := filepath.Join(dir, "complybox.toml")
	if err := os.WriteFile(cfg, []byte("[[credentials]]\nkey = \"sbx_key_cfg\"\nsecret = \"sbx_secret_cfg\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, db, "--config", cfg)
	if status, body := call(t, "GET", s.URL+"/webhooks/outbound", "sbx_key_cfg", "sbx_secret_cfg", nil); status != 200 {
		t.Fatalf("configured credential: %d %s", status, body)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "credentials", "revoke", "--db", db, "sbx_key_cfg")
	s = startServe(t, db, "--config", cfg)
	if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", "sbx_key_cfg", "sbx_secret_cfg", nil); status != 401 {
		t.Fatalf("revoked configured credential after a restart: status %d, want 401", status)
	}
	if logs := s.logs.String(); !strings.Contains(logs, "credentials[0] (key sbx_key_cfg) was revoked and stays revoked") {
		t.Errorf("no warning about the revoked configured key; logs:\n%s", logs)
	}
}

// TestConfiguredCredentialTakenOut: taking a credential out of the config
// file does not revoke it (revoke does), so the next start says that it
// still works and how to shut it out; a credential made with create is
// never named.
func TestConfiguredCredentialTakenOut(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	cfg := filepath.Join(dir, "complybox.toml")
	if err := os.WriteFile(cfg, []byte("[[credentials]]\nkey = \"sbx_key_old\"\nsecret = \"sbx_secret_old\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, db, "--config", cfg)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	created := regexp.MustCompile(`(?m)^key\s+(\S+)$`).FindStringSubmatch(mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox"))
	if err := os.WriteFile(cfg, []byte("[[credentials]]\nkey = \"sbx_key_new\"\nsecret = \"sbx_secret_new\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s = startServe(t, db, "--config", cfg)
	if status, _ := call(t, "GET", s.URL+"/webhooks/outbound", "sbx_key_old", "sbx_secret_old", nil); status != 200 {
		t.Fatalf("the key taken out of the file: status %d (it is not revoked)", status)
	}
	logs := s.logs.String()
	if !strings.Contains(logs, "credential sbx_key_old came from the config file and is no longer in it") ||
		!strings.Contains(logs, "complybox credentials revoke sbx_key_old") {
		t.Errorf("no warning about the configured key taken out; logs:\n%s", logs)
	}
	if created == nil || strings.Contains(logs, "credential "+created[1]+" came from") || strings.Contains(logs, "sbx_key_new came from") {
		t.Errorf("a created or still configured key is named; logs:\n%s", logs)
	}
}

// TestCredentialsListAndRevokeNeedTheDB: list and revoke of a db path that
// names no file create nothing (a typo would otherwise leave a new db
// behind): list shows no credentials and says on stderr which file it did
// not find, revoke fails naming it; create makes the db, so credentials can
// be made before the first serve.
func TestCredentialsListAndRevokeNeedTheDB(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "missing.db")
	r := runCmd(t, "credentials", "list", "--db", missing)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "KEY") || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stderr, "missing.db does not exist") {
		t.Errorf("list: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCmd(t, "credentials", "revoke", "--db", missing, "sbx_key_0")
	if r.code != 1 || !strings.Contains(r.stderr, "missing.db does not exist") {
		t.Errorf("revoke: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Fatal("list or revoke created the missing db")
	}
	mustRun(t, "credentials", "create", "--db", missing, "--env", "sandbox")
	if _, err := os.Stat(missing); err != nil {
		t.Fatalf("create made no db: %v", err)
	}
}

// TestListCommandsOnlyRead: credentials list and console user list open
// the db read-only: a kept backup of an older layout is listed without
// being upgraded (an older binary could no longer open it), and the file
// is the same byte for byte afterwards. Neither creates a missing db, and
// console user remove refuses one.
func TestListCommandsOnlyRead(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "kept.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox", "--name", "kept")
	if r := runWith(t, "long enough secret\n", nil, "console", "user", "add", "--db", db, "rita"); r.code != 0 {
		t.Fatalf("console user add: %s", r.stderr)
	}
	older := binary.BigEndian.AppendUint64(nil, 8)
	setMeta := func(v []byte) {
		b, err := bolt.Open(db, 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		if err := b.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("layout"), v) }); err != nil {
			t.Fatal(err)
		}
	}
	setMeta(older)
	before, err := os.ReadFile(db)
	if err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, "credentials", "list", "--db", db); !strings.Contains(out, "kept") {
		t.Errorf("credentials list: %q", out)
	}
	if out := mustRun(t, "console", "user", "list", "--db", db); !strings.Contains(out, "rita") {
		t.Errorf("console user list: %q", out)
	}
	if after, err := os.ReadFile(db); err != nil || !bytes.Equal(after, before) {
		t.Errorf("listing changed the file (%v); an older layout must stay as it was", err)
	}
	missing := filepath.Join(t.TempDir(), "typo.db")
	if r := runCmd(t, "console", "user", "list", "--db", missing); r.code != 0 || !strings.Contains(r.stderr, "typo.db does not exist") {
		t.Errorf("console user list of a missing db: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := runCmd(t, "console", "user", "remove", "--db", missing, "rita"); r.code != 1 || !strings.Contains(r.stderr, "typo.db does not exist") {
		t.Errorf("console user remove of a missing db: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a console user command created the missing db")
	}
}

// TestCredentialListCell: a name stored before names were checked, with a
// line break or a tab, is listed quoted on its own row; others as they are.
func TestCredentialListCell(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "-", "ci bot": "ci bot", "Zoë": "Zoë", "x\nprd_key_forged": `"x\nprd_key_forged"`, "a\tb": `"a\tb"`} {
		if got := dash(in); got != want {
			t.Errorf("dash(%q) = %q, want %q", in, got, want)
		}
	}
}
