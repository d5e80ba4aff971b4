// Command complybox runs the complybox appliance: a KYC/KYB verification
// service and a custody-events service with signed webhooks, in one binary on
// one embedded bbolt file.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second signal during shutdown kills the process at once
	}()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "complybox:", err)
		os.Exit(exitCode(err))
	}
}

// run runs the complybox command line with args (without the program name).
// Cancelling ctx stops a running server gracefully.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	a := &app{stdin: os.Stdin, stderr: stderr, environ: os.Environ()}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(a.stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	return root.ExecuteContext(ctx)
}

// app is what the commands share: the process's streams and environment.
type app struct {
	stdin   io.Reader
	stderr  io.Writer // logs
	environ []string  // KEY=VALUE, for COMPLYBOX_* overrides
}

// exitError carries the exit code of a failure.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks a command-line mistake (exit code 2).
func usageError(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// exitCode maps an error of run to the process exit code: the code it
// carries, else 1.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// args returns a cobra argument check for between lo and hi arguments whose
// failure is a usage error.
func args(lo, hi int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < lo || len(a) > hi {
			return usageError("%s: expected %s; see %s --help", cmd.CommandPath(), names, cmd.CommandPath())
		}
		return nil
	}
}

// group makes cmd a parent of subcommands: without one it shows help; an
// unknown one is a usage error.
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = func(c *cobra.Command, a []string) error {
		if len(a) > 0 {
			return usageError("unknown command %q for %q; see %s --help", a[0], c.CommandPath(), c.CommandPath())
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	return cmd
}

func newRootCmd(a *app) *cobra.Command {
	root := group(&cobra.Command{
		Use:   "complybox",
		Short: "KYC/KYB verification and custody webhooks in one binary",
		Long: "complybox runs a KYC/KYB verification service and a custody-events service\n" +
			"with signed webhooks from a durable outbox, in one process on one bbolt file.",
		SilenceErrors: true,
		SilenceUsage:  true,
	})
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError("%v; see %s --help", err, c.CommandPath())
	})
	root.AddCommand(
		newServeCmd(a),
		newCredentialsCmd(a),
		newConsoleCmd(a),
		newBackupCmd(a),
		newSeedCmd(a),
		newCompactCmd(a),
		newDemoCmd(a),
		newVerifySignatureCmd(a),
		newVersionCmd(),
	)
	return root
}

// addConfigFlags registers --config and --db on cmd.
func addConfigFlags(cmd *cobra.Command, f *configFlags) {
	cmd.Flags().StringVar(&f.path, "config", "", "TOML configuration `FILE` (default: built-in defaults)")
	cmd.Flags().StringVar(&f.db, "db", "", "bbolt database `FILE` (overrides db; default complybox.db)")
}

func newServeCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API, the webhook dispatcher and the sandbox simulators",
		Long: "serve runs the API, the webhook dispatcher and the sandbox simulators in one\n" +
			"process. Precedence: flags > COMPLYBOX_* environment variables > config file >\n" +
			"built-in defaults. SIGINT or SIGTERM stops it gracefully.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, warnings, err := loadConfig(f, a.environ)
			if err != nil {
				return err
			}
			logger := newLogger(cfg.Log, a.stderr)
			for _, w := range warnings {
				logger.Warn(w)
			}
			return serve(cmd.Context(), cfg, logger, cmd.OutOrStdout())
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&f.listen, "listen", "", "`ADDR` to listen on, host:port (overrides listen; default 127.0.0.1:8080)")
	return cmd
}

// Shutdown bounds.
const (
	shutdownTimeout = 10 * time.Second // in-flight HTTP requests
	readyTimeout    = 5 * time.Second  // the dispatcher's start
)

// serve runs complybox until ctx is done, then shuts down gracefully: it
// stops accepting, lets in-flight requests finish (bounded), stops the
// dispatcher after its in-flight attempts (bounded) and closes the db.
func serve(ctx context.Context, cfg Config, logger *slog.Logger, stdout io.Writer) error {
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return serveOn(ctx, ln, cfg, logger, stdout)
}

// serveOn is serve on a listener already bound; it closes ln.
func serveOn(ctx context.Context, ln net.Listener, cfg Config, logger *slog.Logger, stdout io.Writer) (err error) {
	defer ln.Close()
	publicURL := cfg.publicURLFor(ln.Addr())

	st, err := store.Open(cfg.DB, store.Options{Logger: logger, Settings: cfg.settings(publicURL)})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close db: %w", cerr)
		}
	}()
	if err := applyCredentials(st, cfg.Credentials, stdout); err != nil {
		return err
	}
	generated, err := st.InitCallback()
	if err != nil {
		return fmt.Errorf("kyc callback: %w", err)
	}
	if generated != "" {
		fmt.Fprintf(stdout, "KYC callback signing secret (generated, shown once): %s\n", generated)
	}

	ver := readVersion()
	disp := dispatch.New(st, cfg.dispatchConfig(ver.version), logger)
	dispCtx, stopDispatch := context.WithCancel(context.WithoutCancel(ctx))
	dispDone := make(chan struct{})
	go func() {
		defer close(dispDone)
		if err := disp.Run(dispCtx); err != nil {
			logger.Error("dispatcher stopped", "err", err)
		}
	}()
	defer func() {
		stopDispatch()
		<-dispDone
	}()

	srv := &http.Server{
		Handler:           server.New(st, disp, server.Config{PublicURL: publicURL, Version: ver.version}, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // 25 MiB uploads on a slow link
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	if err := waitRunning(ctx, disp); err != nil {
		srv.Close()
		return err
	}
	logger.Info("listening", "addr", ln.Addr().String(), "publicUrl", publicURL, "consoleUrl", publicURL+"/console", "db", cfg.DB, "version", ver.version)
	fmt.Fprintf(stdout, "complybox listening on http://%s\n", ln.Addr())

	select {
	case <-ctx.Done():
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		logger.Warn("shutdown: closing connections still open", "err", err)
		srv.Close()
	}
	return nil
}

// waitRunning waits until the dispatcher's loop runs, so that the server is
// healthy when it says it listens.
func waitRunning(ctx context.Context, d *dispatch.Dispatcher) error {
	deadline := time.Now().Add(readyTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !d.Running() {
		if time.Now().After(deadline) {
			return errors.New("the dispatcher did not start")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	return nil
}

// applyCredentials stores the configured credentials. When there are none and
// the db holds none, it creates a sandbox partner credential and prints it
// once, so a newcomer can call the API at once.
func applyCredentials(st *store.Store, creds []CredentialConfig, stdout io.Writer) error {
	for i, c := range creds {
		env := store.Env(c.Environment)
		if env == "" {
			env = store.Sandbox
		}
		if err := st.EnsureCredential(c.Key, c.Secret, env, c.Role, c.Name); err != nil {
			return fmt.Errorf("config: credentials[%d]: %w", i, err)
		}
	}
	if len(creds) > 0 {
		return nil
	}
	existing, err := st.Credentials()
	if err != nil {
		return err
	}
	if len(existing) > 0 {
		return nil
	}
	c, secret, err := st.CreateCredential(store.Sandbox, store.RolePartner, "first-run")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Created a sandbox API credential (shown once; only its hash is stored):\n"+
		"  X-Api-Key:    %s\n  X-Api-Secret: %s\n", c.Key, secret)
	return nil
}

// withStore opens the db named by the configuration for a one-shot command,
// runs fn and closes the db. With mustExist, a missing db file is an error
// instead of a new empty db.
func (a *app) withStore(f configFlags, mustExist bool, fn func(st *store.Store, cfg Config) error) (err error) {
	cfg, warnings, err := loadConfig(f, a.environ)
	if err != nil {
		return err
	}
	logger := newLogger(cfg.Log, a.stderr)
	for _, w := range warnings {
		logger.Warn(w)
	}
	if mustExist {
		if _, err := os.Stat(cfg.DB); err != nil {
			return err
		}
	}
	st, err := store.Open(cfg.DB, store.Options{Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := st.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close db: %w", cerr)
		}
	}()
	return fn(st, cfg)
}

func newCredentialsCmd(a *app) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "credentials",
		Short: "Create, list and revoke API credentials",
		Long: "credentials manages the API credentials kept in the db. Secrets are printed\n" +
			"once and stored only as a hash. Stop the server first: the db file is locked.",
	})
	cmd.AddCommand(newCredentialsCreateCmd(a), newCredentialsListCmd(a), newCredentialsRevokeCmd(a))
	return cmd
}

func newCredentialsCreateCmd(a *app) *cobra.Command {
	var f configFlags
	var env, role, name string
	cmd := &cobra.Command{
		Use:   "create --env ENV [--role partner|admin] [--name N]",
		Short: "Create a credential and print its secret once",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if env == "" {
				return usageError("credentials create: --env is required (sandbox or production)")
			}
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				c, secret, err := st.CreateCredential(store.Env(env), role, name)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintf(w, "key\t%s\nsecret\t%s\nenvironment\t%s\nrole\t%s\nname\t%s\n", c.Key, secret, c.Environment, c.Role, dash(c.Name))
				fmt.Fprintln(w, "The secret is shown only now; complybox keeps only its SHA-256 hash.")
				return w.Flush()
			})
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&env, "env", "", "environment: sandbox or production (required)")
	cmd.Flags().StringVar(&role, "role", store.RolePartner, "role: partner or admin")
	cmd.Flags().StringVar(&name, "name", "", "a label for the credential")
	return cmd
}

func newCredentialsListCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List credentials (never their secrets)",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				creds, err := st.Credentials()
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				fmt.Fprintln(w, "KEY\tENVIRONMENT\tROLE\tNAME\tCREATED\tREVOKED")
				for _, c := range creds {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Key, c.Environment, c.Role, dash(c.Name), dash(c.CreatedAt.String()), dash(c.RevokedAt.String()))
				}
				return w.Flush()
			})
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newCredentialsRevokeCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "revoke KEY",
		Short: "Revoke a credential: it gets 401 from then on",
		Args:  args(1, 1, "one credential KEY"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			return a.withStore(f, true, func(st *store.Store, _ Config) error {
				if err := st.RevokeCredential(a2[0]); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", a2[0])
				return err
			})
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

func newBackupCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "backup --db FILE OUT",
		Short: "Write a consistent copy of a db file to OUT (- for stdout)",
		Long: "backup writes a consistent copy of a db file (bbolt Tx.WriteTo) to OUT, or to\n" +
			"stdout when OUT is -. The db must not be in use; a running server offers the\n" +
			"same at GET /v1/admin/backup (admin credential).",
		Args: args(1, 1, "one OUT file"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			return a.withStore(f, true, func(st *store.Store, cfg Config) error {
				if a2[0] == "-" {
					return st.Backup(cmd.OutOrStdout(), nil)
				}
				if sameFile(cfg.DB, a2[0]) {
					return usageError("backup: OUT %s is the db itself", a2[0])
				}
				if err := writeBackup(st, a2[0]); err != nil {
					return fmt.Errorf("backup: %w", err)
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s\n", cfg.DB, a2[0])
				return err
			})
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

// sameFile reports whether a and b name one existing file.
func sameFile(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	return err == nil && os.SameFile(ia, ib)
}

// writeBackup writes the backup to a temporary file beside out and renames
// it into place, so out is never a partial copy.
func writeBackup(st *store.Store, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".complybox-backup-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := st.Backup(tmp, nil); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

// errMismatch is verify-signature's failure: exit code 1.
func errMismatch() error { return &exitError{code: 1, err: errors.New("signature mismatch")} }

func newVerifySignatureCmd(a *app) *cobra.Command {
	var secret, signature, id string
	var timestamp int64
	cmd := &cobra.Command{
		Use:   "verify-signature --secret S --signature HEX [FILE]",
		Short: "Check a webhook body (FILE or stdin) against its X-Webhook-Signature",
		Long: "verify-signature checks a webhook body, read from FILE or stdin, against the\n" +
			"X-Webhook-Signature header: lowercase hex HMAC-SHA256 of the raw body keyed\n" +
			"with the signing secret exactly as the API returned it. Exit 0 on match, 1 on\n" +
			"mismatch.\n\n" +
			"A Standard Webhooks webhook-signature header (\"v1,<base64>\", several\n" +
			"separated by spaces) is checked too when --id (webhook-id) and --timestamp\n" +
			"(webhook-timestamp) are given.",
		Args: args(0, 1, "at most one FILE"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			if secret == "" || signature == "" {
				return usageError("verify-signature: --secret and --signature are required")
			}
			standard := strings.HasPrefix(signature, "v1,")
			if standard && (id == "" || timestamp == 0) {
				return usageError("verify-signature: a v1 signature needs --id and --timestamp")
			}
			var body []byte
			var err error
			if len(a2) == 1 && a2[0] != "-" {
				body, err = os.ReadFile(a2[0])
			} else {
				body, err = io.ReadAll(cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			ok := false
			if standard {
				ok = verifyStandard(secret, id, timestamp, body, signature)
			} else {
				ok = dispatch.Verify(secret, body, signature)
			}
			if !ok {
				return errMismatch()
			}
			fmt.Fprintln(cmd.OutOrStdout(), "signature OK")
			return nil
		},
	}
	cmd.Flags().StringVar(&secret, "secret", "", "the signing secret, exactly as returned by the API")
	cmd.Flags().StringVar(&signature, "signature", "", "the X-Webhook-Signature header (hex), or a webhook-signature header (v1,…)")
	cmd.Flags().StringVar(&id, "id", "", "the webhook-id header, for a v1 signature")
	cmd.Flags().Int64Var(&timestamp, "timestamp", 0, "the webhook-timestamp header (Unix seconds), for a v1 signature")
	return cmd
}

// verifyStandard reports whether one of the space-separated signatures of a
// Standard Webhooks webhook-signature header matches, in constant time.
func verifyStandard(secret, id string, timestamp int64, body []byte, header string) bool {
	want := []byte(dispatch.SignStandard(secret, id, timestamp, body))
	ok := false
	for _, sig := range strings.Fields(header) {
		if subtle.ConstantTimeCompare([]byte(sig), want) == 1 {
			ok = true
		}
	}
	return ok
}

// versionInfo describes the build.
type versionInfo struct {
	version string // module version, "dev" for a local build
	commit  string // VCS revision, "unknown" when not stamped
	goVer   string
}

// readVersion reads the version from the binary's build information.
func readVersion() versionInfo {
	v := versionInfo{version: "dev", commit: "unknown", goVer: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if info.Main.Version != "" && info.Main.Version != "(devel)" {
		v.version = info.Main.Version
	}
	var dirty bool
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v.commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && v.commit != "unknown" {
		v.commit += "-dirty"
	}
	return v
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := readVersion()
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "complybox %s\ncommit: %s\ngo: %s\n", v.version, v.commit, strings.TrimSpace(v.goVer))
			return err
		},
	}
}
