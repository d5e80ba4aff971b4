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
	var file string
	cmd := &cobra.Command{
		Use:   "set-password [--password-file FILE]",
		Short: "Set the console's operator password (read from stdin or a file)",
		Long: "set-password sets the operator password of the console, stored only as a\n" +
			"bcrypt hash, and ends every console session. The password is the first line\n" +
			"of standard input, or of --password-file FILE; it is never a flag value, so it\n" +
			"never shows in the process list. At least 8 characters, at most 72 bytes.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			password, err := readPassword(cmd.InOrStdin(), file)
			if err != nil {
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
