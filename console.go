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
	cmd.AddCommand(newConsoleSetPasswordCmd(a))
	return cmd
}

func newConsoleSetPasswordCmd(a *app) *cobra.Command {
	var f configFlags
	var file, flagPassword string
	cmd := &cobra.Command{
		Use:   "set-password [PASSWORD] [--password-file FILE]",
		Short: "Set the console's operator password (from stdin, a file, or the command line)",
		Long: "set-password sets the operator password of the console, stored only as a\n" +
			"bcrypt hash, and ends every console session. On a terminal it asks for the\n" +
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
			} else if password, err = a.readPassword(cmd, file); err != nil {
				return err
			}
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				if err := st.SetConsolePassword(password); err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "Console password set; every console session was ended.")
				return nil
			})
		},
	}
	addConfigFlags(cmd, &f)
	cmd.Flags().StringVar(&file, "password-file", "", "read the password from the first line of `FILE` instead of stdin")
	cmd.Flags().StringVar(&flagPassword, "password", "", "the password itself (visible in the process list; prefer stdin)")
	return cmd
}

// readPassword reads the password from the first line of file; else, when
// stdin is a terminal, by prompting twice on stderr without echo; else from
// the first line of stdin, without a prompt and reading no further.
func (a *app) readPassword(cmd *cobra.Command, file string) (string, error) {
	if file != "" {
		fh, err := os.Open(file)
		if err != nil {
			return "", misuse(cmd, err.Error())
		}
		defer fh.Close()
		return firstLine(cmd, fh)
	}
	if fd, ok := terminalFd(a.stdin); ok {
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
