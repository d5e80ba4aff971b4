package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

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
