package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/complybox/complybox/store"
)

// newConsoleCmd builds `complybox console`, the operator console's commands.
func newConsoleCmd(a *app) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "console",
		Short: "Manage the operator console",
		Long: "console manages the operator console served at {public_url}/console.\n" +
			"Stop the server first: the db file is locked while it runs.",
	})
	cmd.AddCommand(newConsoleSetPasswordCmd(a), newConsoleUserCmd(a))
	return cmd
}

// newConsoleUserCmd builds `complybox console user`: the operator accounts.
func newConsoleUserCmd(a *app) *cobra.Command {
	cmd := group(&cobra.Command{
		Use:   "user",
		Short: "Manage the console's operator accounts (add, list, remove)",
		Long: "user manages the operators who log in to the console, each with a name,\n" +
			"a password and a role: reviewer (decisions on applicants, delivery retries)\n" +
			"or admin (also settings, levels, credentials and operator accounts). The\n" +
			"single password of earlier versions is the admin named \"admin\".",
	})
	cmd.AddCommand(newConsoleUserAddCmd(a), newConsoleUserListCmd(a), newConsoleUserRemoveCmd(a))
	return cmd
}

func newConsoleUserAddCmd(a *app) *cobra.Command {
	var f configFlags
	var file, role string
	cmd := &cobra.Command{
		Use:   "add NAME [--role reviewer|admin] [--password-file FILE]",
		Short: "Add an operator account (password from stdin or a file)",
		Long: "add creates the operator NAME (lower-case letters, digits, dots, dashes,\n" +
			"underscores) with --role reviewer (the default) or admin. On a terminal it\n" +
			"asks for the password twice without echoing it; otherwise the password is\n" +
			"the first line of standard input, or of --password-file FILE. At least 8\n" +
			"characters, at most 72 bytes; only its bcrypt hash is stored.",
		Args: args(1, 1, "the operator's name"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if !store.ValidConsoleRole(role) {
				return misuse(cmd, "--role must be reviewer or admin")
			}
			password, err := a.readPassword(cmd, file, f)
			if err != nil {
				return err
			}
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				u, err := st.AddConsoleUser(argv[0], role, password, store.ConsoleCLIActor)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Operator %s added as %s.\n", u.Name, u.Role)
				return err
			})
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&role, "role", store.ConsoleReviewer, "the operator's `ROLE`: reviewer or admin")
	cmd.Flags().StringVar(&file, "password-file", "", "read the password from the first line of `FILE` instead of stdin")
	return cmd
}

func newConsoleUserListCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the operator accounts",
		Args:  args(0, 0, ""),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.readStore(f, "operators", cmd.ErrOrStderr(), func(st *store.Store) error {
				users, err := st.ConsoleUsers()
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if len(users) == 0 {
					fmt.Fprintln(out, "No operator yet: `complybox console set-password` creates the admin.")
					return nil
				}
				fmt.Fprintf(out, "%-24s %-9s %s\n", "NAME", "ROLE", "CREATED")
				for _, u := range users {
					created := "-"
					if !u.CreatedAt.IsZero() {
						created = u.CreatedAt.String()
					}
					fmt.Fprintf(out, "%-24s %-9s %s\n", u.Name, u.Role, created)
				}
				return nil
			})
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

func newConsoleUserRemoveCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an operator account and end its sessions (never the last admin)",
		Args:  args(1, 1, "the operator's name"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.withStore(f, true, func(st *store.Store, _ Config) error {
				if err := st.RemoveConsoleUser(argv[0], store.ConsoleCLIActor); err != nil {
					return err
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "Operator %s removed.\n", argv[0])
				return err
			})
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

func newConsoleSetPasswordCmd(a *app) *cobra.Command {
	var f configFlags
	var file, flagPassword, user string
	cmd := &cobra.Command{
		Use:   "set-password [PASSWORD] [--user NAME] [--password-file FILE]",
		Short: "Set a console operator's password (from stdin, a file, or the command line)",
		Long: "set-password sets the password of the operator --user (default \"admin\",\n" +
			"the first admin, created with the admin role when missing), stored only\n" +
			"as a bcrypt hash, and ends that operator's sessions. On a terminal it asks for the\n" +
			"password twice without echoing it; otherwise the password is the first line\n" +
			"of standard input, or of --password-file FILE. Scripts may also pass it as\n" +
			"the argument or --password, which other users of the machine can see in the\n" +
			"process list. At least 8 characters, at most 72 bytes.",
		Args: args(0, 1, "at most one argument, the password"),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var given []string
			if len(argv) == 1 {
				given = append(given, argv[0])
			}
			if cmd.Flags().Changed("password") {
				given = append(given, flagPassword)
			}
			if len(given) > 0 && file != "" || len(given) > 1 {
				return misuse(cmd, "give the password one way only (argument, --password, --password-file or stdin)")
			}
			var password string
			var err error
			if len(given) == 1 {
				password = given[0]
				if password == "" {
					return misuse(cmd, "the password is empty")
				}
			} else if password, err = a.readPassword(cmd, file, f); err != nil {
				return err
			}
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				if user == store.ConsoleFirstAdmin {
					err = st.SetConsolePassword(password)
				} else {
					err = st.SetConsoleUserPassword(user, password, store.ConsoleCLIActor)
				}
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "Console password set for %s; that operator's console sessions were ended.\n", user)
				return err
			})
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&file, "password-file", "", "read the password from the first line of `FILE` instead of stdin")
	cmd.Flags().StringVar(&user, "user", store.ConsoleFirstAdmin, "the operator whose password to set (`NAME`)")
	cmd.Flags().StringVar(&flagPassword, "password", "", "the password itself (visible in the process list; prefer stdin)")
	return cmd
}

// readPassword reads the password from the first line of file; else, when
// stdin is a terminal, by prompting twice on stderr without echo (after
// checking that no running server holds the db of f); else from the first
// line of stdin, without a prompt and reading no further.
func (a *app) readPassword(cmd *cobra.Command, file string, f configFlags) (string, error) {
	if file != "" {
		fh, err := os.Open(file)
		if err != nil {
			return "", misuse(cmd, err.Error())
		}
		defer fh.Close()
		return firstLine(cmd, fh)
	}
	if fd, ok := terminalFd(a.stdin); ok {
		// Nobody types a password twice for a db a running server holds.
		if cfg, _, err := loadConfig(f, a.environ); err == nil {
			if err := store.InUse(cfg.DB); err != nil {
				return "", err
			}
		}
		return a.promptPassword(cmd, fd)
	}
	return firstLine(cmd, a.stdin)
}

// terminalFd returns the file descriptor of r when r is a terminal.
func terminalFd(r io.Reader) (int, bool) {
	f, ok := r.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// promptPassword asks for the password twice on the terminal fd, echoing
// neither, and refuses two different answers.
func (a *app) promptPassword(cmd *cobra.Command, fd int) (string, error) {
	ask := func(prompt string) (string, error) {
		fmt.Fprint(a.stderr, prompt)
		b, err := term.ReadPassword(fd)
		fmt.Fprintln(a.stderr) // the Enter key was not echoed either
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		return string(b), nil
	}
	password, err := ask("New password: ")
	if err != nil {
		return "", err
	}
	if password == "" {
		return "", misuse(cmd, "the password is empty")
	}
	again, err := ask("Repeat password: ")
	if err != nil {
		return "", err
	}
	if again != password {
		return "", errors.New("the two passwords differ; nothing was changed")
	}
	return password, nil
}

// firstLine reads r up to the first line ending, one byte at a time so that
// nothing after it is consumed, and returns the line without its ending.
func firstLine(cmd *cobra.Command, r io.Reader) (string, error) {
	var line []byte
	b := make([]byte, 1)
	for {
		n, err := r.Read(b)
		if n == 1 {
			if b[0] == '\n' {
				break
			}
			line = append(line, b[0])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
	}
	password := strings.TrimSuffix(string(line), "\r")
	if password == "" {
		return "", misuse(cmd, "no password given; pipe it on stdin or use --password-file FILE")
	}
	return password, nil
}
