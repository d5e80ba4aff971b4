package main

// What every command shares: the app's streams and environment, the
// one-shot opening of the db, exit codes and the wording of errors.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

// app is what the commands share: the process's streams and environment.
type app struct {
	stdin   io.Reader
	stderr  io.Writer // logs, prompts
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

// exitCode maps an error of a command to the process exit code: the code it
// carries, else 1.
func exitCode(err error) int {
	var e *exitError
	if errors.As(err, &e) {
		return e.code
	}
	return 1
}

// errorMessage is err for a person at a terminal: a store error reads as its
// message and the field it names, without the API's machine code
// ("validation_failed: …"), wherever it sits in the chain.
func errorMessage(err error) string {
	msg := err.Error()
	var se *store.Error
	if errors.As(err, &se) {
		human := se.Message
		if se.Field != "" {
			human += " (field " + se.Field + ")"
		}
		msg = strings.Replace(msg, se.Error(), human, 1)
	}
	return msg
}

// name is cmd's path without the program name ("credentials revoke"), the
// prefix of its messages; "" for the root command.
func name(cmd *cobra.Command) string {
	return strings.TrimPrefix(strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()), " ")
}

// misuse returns a usage error about cmd: "<name>: <problem>; see <path>
// --help".
func misuse(cmd *cobra.Command, problem string) error {
	if n := name(cmd); n != "" {
		problem = n + ": " + problem
	}
	return usageError("%s; see %s --help", problem, cmd.CommandPath())
}

// args returns a cobra argument check for between lo and hi arguments whose
// failure is a usage error.
func args(lo, hi int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if len(a) < lo || len(a) > hi {
			return misuse(cmd, "expected "+names)
		}
		return nil
	}
}

// group makes cmd a parent of subcommands: without one it shows help; an
// unknown one is a usage error.
func group(cmd *cobra.Command) *cobra.Command {
	cmd.Args = func(c *cobra.Command, a []string) error {
		if len(a) > 0 {
			return misuse(c, fmt.Sprintf("unknown command %q", a[0]))
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	return cmd
}

// addConfigFlags registers --config and --db on cmd.
func addConfigFlags(cmd *cobra.Command, f *configFlags) {
	cmd.Flags().StringVar(&f.path, "config", "", "TOML configuration `FILE` (default: built-in defaults)")
	cmd.Flags().StringVar(&f.db, "db", "", "bbolt database `FILE` (overrides db; default complybox.db)")
}

// config loads the configuration of a one-shot command and logs its
// warnings. With mustExist, a missing db file is an error.
func (a *app) config(f configFlags, mustExist bool) (Config, *slog.Logger, error) {
	cfg, warnings, err := loadConfig(f, a.environ)
	if err != nil {
		return Config{}, nil, err
	}
	logger := newLogger(cfg.Log, a.stderr)
	for _, w := range warnings {
		logger.Warn(w)
	}
	if mustExist {
		if _, err := os.Stat(cfg.DB); errors.Is(err, fs.ErrNotExist) {
			return Config{}, nil, fmt.Errorf("the db file %s does not exist", cfg.DB)
		} else if err != nil {
			return Config{}, nil, err
		}
	}
	return cfg, logger, nil
}

// withStore opens the db named by the configuration for a one-shot command,
// runs fn and closes the db. With mustExist, a missing db file is an error
// instead of a new empty db.
func (a *app) withStore(f configFlags, mustExist bool, fn func(st *store.Store, cfg Config) error) (err error) {
	cfg, logger, err := a.config(f, mustExist)
	if err != nil {
		return err
	}
	return useStore(cfg, logger, fn)
}

// readStore runs fn on the db of f opened read-only (store.ReadOnly), for
// the commands that only list: the file is neither written nor upgraded.
// A db file that does not exist is not created: stderr names the path read
// (a typo?) and that there are no what, and fn does not run.
func (a *app) readStore(f configFlags, what string, stderr io.Writer, fn func(st *store.Store) error) error {
	cfg, _, err := a.config(f, false)
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.DB); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "complybox: the db file %s does not exist: no %s\n", cfg.DB, what)
		return nil
	}
	return store.ReadOnly(cfg.DB, fn)
}

// useStore opens the db of cfg, runs fn and closes the db.
func useStore(cfg Config, logger *slog.Logger, fn func(st *store.Store, cfg Config) error) (err error) {
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
