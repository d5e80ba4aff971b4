package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

func newBackupCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "backup --db FILE OUT",
		Short: "Write a consistent copy of a db file to OUT (- for stdout)",
		Long: "backup writes a consistent copy of a db file (bbolt Tx.WriteTo) to OUT, or to\n" +
			"stdout when OUT is -. The db is opened read-only and copied as it is: never\n" +
			"upgraded first, so a backup taken before an upgrade keeps the old layout. The\n" +
			"db must not be in use; a running server offers the same at\n" +
			"GET /v1/admin/backup (admin credential).",
		Args: args(1, 1, "one OUT file"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			cfg, _, err := a.config(f, true)
			if err != nil {
				return err
			}
			if a2[0] == "-" {
				return store.BackupFile(cfg.DB, cmd.OutOrStdout())
			}
			if sameFile(cfg.DB, a2[0]) {
				return usageError("backup: OUT %s is the db itself", a2[0])
			}
			if err := writeBackup(cfg.DB, a2[0]); err != nil {
				return fmt.Errorf("backup: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "backed up %s to %s\n", cfg.DB, a2[0])
			return err
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

// writeBackup writes the backup of the db at db to a temporary file beside
// out and renames it into place, so out is never a partial copy.
func writeBackup(db, out string) error {
	unlock, err := lockOut(out)
	if err != nil {
		return err
	}
	defer unlock()
	tmp, err := createTempBeside(out, "backup")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := store.BackupFile(db, tmp); err != nil {
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
