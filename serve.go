package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/dispatch"
	"github.com/complybox/complybox/server"
	"github.com/complybox/complybox/server/wire"
	"github.com/complybox/complybox/store"
)

func newServeCmd(a *app) *cobra.Command {
	var (
		f          configFlags
		cpuProfile string
	)
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
			// One write(2) for many lines under load, and no handler
			// holding slog's lock across one: complyperf's write phase
			// 4.3k -> 4.9k req/s, 254 -> 222 µs of CPU per withdrawal
			// (eight pairs each, alternated).
			logs := newLogBuffer(a.stderr)
			defer logs.Close()
			logger := newLogger(cfg.Log, logs)
			for _, w := range warnings {
				logger.Warn(w)
			}
			tuneGC(a.environ)
			if cpuProfile != "" {
				stop, err := startCPUProfile(cpuProfile)
				if err != nil {
					return err
				}
				err = serve(cmd.Context(), cfg, logger, cmd.OutOrStdout())
				return cmp.Or(err, stop())
			}
			return serve(cmd.Context(), cfg, logger, cmd.OutOrStdout())
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&f.listen, "listen", "", "`ADDR` to listen on, host:port (overrides listen; default 127.0.0.1:8080)")
	cmd.Flags().StringVar(&cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to `FILE` on exit (go tool pprof; how default.pgo is made, README)")
	return cmd
}

// startCPUProfile starts the Go CPU profiler writing to path; the function it
// returns stops it and closes the file, and returns what went wrong writing
// it (runtime/pprof drops its own write errors: a full disk would leave an
// empty profile that looks written). It profiles the whole process, so it
// is for one serve per process.
func startCPUProfile(path string) (func() error, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	out := &firstError{w: f}
	if err := pprof.StartCPUProfile(out); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := cmp.Or(out.err, f.Close()); err != nil {
			return fmt.Errorf("--cpuprofile: writing %s: %w", path, err)
		}
		return nil
	}, nil
}

// firstError is a writer that keeps the first error of w's writes.
type firstError struct {
	w   io.Writer
	err error
}

func (e *firstError) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}

// tuneGC trades memory for CPU, unless GOGC or GOMEMLIMIT say otherwise:
// the garbage collector runs at a fifth of its default pace (GOGC=400),
// which cut the CPU a withdrawal costs with the webhook receiver live by
// about 12 % (BenchmarkWithdrawalWebhookLive), and a soft limit of 1 GiB
// brings the default pace back before the heap gets large.
func tuneGC(environ []string) {
	set := func(name string) bool {
		return slices.ContainsFunc(environ, func(kv string) bool { return strings.HasPrefix(kv, name+"=") })
	}
	if !set("GOGC") {
		debug.SetGCPercent(400)
	}
	if !set("GOMEMLIMIT") {
		debug.SetMemoryLimit(1 << 30)
	}
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
		// Say which setting chose the address: another process may hold it.
		return fmt.Errorf("listen: %w (choose another address with --listen, COMPLYBOX_LISTEN or listen in the config)", err)
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
	if err := applyCredentials(st, cfg.Credentials, stdout, logger); err != nil {
		return err
	}
	generated, err := st.InitCallback()
	if err != nil {
		return fmt.Errorf("kyc callback: %w", err)
	}
	if generated != "" {
		// Shown once: an output that cannot take it stops the start, and
		// the secret is not kept, so the next start generates another.
		if _, err := fmt.Fprintf(stdout, "KYC callback signing secret (generated, shown once): %s\n", generated); err != nil {
			return errors.Join(fmt.Errorf("printing the generated KYC callback secret: %w", err), st.DiscardCallbackSecret(generated))
		}
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

	brand, err := cfg.hostedBranding()
	if err != nil {
		return err
	}
	api := server.New(st, disp, server.Config{PublicURL: publicURL, Version: ver.version, NoMetrics: !cfg.Metrics.Enabled,
		Branding: brand, Quality: cfg.Quality.thresholds()}, logger)
	srv := &http.Server{
		Handler:           api,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       2 * time.Minute, // 25 MiB uploads on a slow link
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		// OPTIONS * reaches the handler, which answers it with the
		// X-Request-Id every response carries (SPEC §2).
		DisableGeneralOptionsHandler: true,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(wire.ProtocolErrors(ln, api.Unread)) }()

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

// applyCredentials stores the configured credentials, warning about those
// revoked (they stay so). When there are none and the db holds none, it
// creates a sandbox partner credential and prints it once, so a newcomer
// can call the API at once.
func applyCredentials(st *store.Store, creds []CredentialConfig, stdout io.Writer, logger *slog.Logger) error {
	for i, c := range creds {
		env := store.Env(c.Environment)
		if env == "" {
			env = store.Sandbox
		}
		revoked, err := st.EnsureCredential(c.Key, c.Secret, env, c.Role, c.Name)
		if err != nil {
			return fmt.Errorf("config: credentials[%d]: %w", i, err)
		}
		if revoked {
			logger.Warn(fmt.Sprintf("config: credentials[%d] (key %s) was revoked and stays revoked: its calls answer 401; give the configured credential a new key", i, c.Key))
		}
	}
	existing, err := st.Credentials()
	if err != nil {
		return err
	}
	// A configured key taken out of the file still works: removing it
	// from the file is not revoking it, which an operator replacing a
	// leaked key must be told.
	named := map[string]bool{}
	for _, c := range creds {
		named[c.Key] = true
	}
	for _, c := range existing {
		if c.Configured && c.RevokedAt.IsZero() && !named[c.Key] {
			logger.Warn(fmt.Sprintf("credential %s came from the config file and is no longer in it, but it still works: "+
				"revoke it with `complybox credentials revoke %s` if it must stop", c.Key, c.Key))
		}
	}
	if len(creds) > 0 || len(existing) > 0 {
		return nil
	}
	c, secret, err := st.CreateCredential(store.Sandbox, store.RolePartner, "first-run")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "Created a sandbox API credential (shown once; only its hash is stored):\n"+
		"  X-Api-Key:    %s\n  X-Api-Secret: %s\n", c.Key, secret); err != nil {
		// Not shown, not kept: the next start creates and prints another.
		return errors.Join(fmt.Errorf("printing the first-run credential: %w", err), st.DeleteCredential(c.Key))
	}
	return nil
}
