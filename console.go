package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

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
			"bcrypt hash, and ends every console session. The password is the first line\n" +
			"of standard input, or of --password-file FILE; scripts may also pass it as\n" +
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
				return usageError("console set-password: give the password one way only (argument, --password, --password-file or stdin)")
			}
			var password string
			var err error
			if len(given) == 1 {
				password = given[0]
				if password == "" {
					return usageError("console set-password: the password is empty")
				}
			} else if password, err = readPassword(cmd.InOrStdin(), file); err != nil {
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

// readPassword returns the first line of file, or of stdin when file is
// empty, without its line ending.
func readPassword(stdin io.Reader, file string) (string, error) {
	src := stdin
	if file != "" {
		fh, err := os.Open(file)
		if err != nil {
			return "", usageError("console set-password: %v", err)
		}
		defer fh.Close()
		src = fh
	}
	line, err := bufio.NewReader(src).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password: %w", err)
	}
	line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
	if line == "" {
		return "", usageError("console set-password: no password given; pipe it on stdin or use --password-file FILE")
	}
	return line, nil
}
