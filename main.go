// Command complybox runs the complybox appliance: a KYC/KYB verification
// service and a custody-events service with signed webhooks, in one binary on
// one embedded bbolt file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

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
