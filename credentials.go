package main

import (
	"cmp"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

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
		Long: "create makes a credential and prints its secret once. A missing db file is\n" +
			"created, so that credentials can be made before the first serve; list shows\n" +
			"none for a missing db file (and says so), revoke refuses it; neither creates it.",
		Args: args(0, 0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case env == "":
				return misuse(cmd, "--env is required (sandbox or production)")
			case !store.Env(env).Valid():
				return misuse(cmd, fmt.Sprintf("--env %q: the environment must be sandbox or production", env))
			case role != store.RolePartner && role != store.RoleAdmin:
				return misuse(cmd, fmt.Sprintf("--role %q: the role must be partner or admin", role))
			}
			return a.withStore(f, false, func(st *store.Store, _ Config) error {
				c, secret, err := st.CreateCredential(store.Env(env), role, name)
				if err != nil {
					return err
				}
				w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
				_, err1 := fmt.Fprintf(w, "key\t%s\nsecret\t%s\nenvironment\t%s\nrole\t%s\nname\t%s\n", c.Key, secret, c.Environment, c.Role, dash(c.Name))
				_, err2 := fmt.Fprintln(w, "The secret is shown only now; complybox keeps only its SHA-256 hash.")
				if err := cmp.Or(err1, err2, w.Flush()); err != nil {
					// Not shown, not kept: no live credential has a secret nobody saw.
					return errors.Join(fmt.Errorf("printing the credential: %w", err), st.DeleteCredential(c.Key))
				}
				return nil
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
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "KEY\tENVIRONMENT\tROLE\tNAME\tCREATED\tREVOKED")
			err := a.readStore(f, "credentials", cmd.ErrOrStderr(), func(st *store.Store) error {
				creds, err := st.Credentials()
				if err != nil {
					return err
				}
				for _, c := range creds {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Key, c.Environment, c.Role, dash(c.Name), dash(c.CreatedAt.String()), dash(c.RevokedAt.String()))
				}
				return nil
			})
			if err != nil {
				return err
			}
			return w.Flush()
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

// dash is s as one cell of the list: "-" when empty, quoted as Go quotes
// it when it holds a control character (a name stored before names were
// checked), so a line break or a tab cannot make a row or a column.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	if strings.ContainsFunc(s, unicode.IsControl) {
		return strconv.Quote(s)
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
