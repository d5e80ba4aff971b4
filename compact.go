package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/complybox/complybox/store"
)

func newCompactCmd(a *app) *cobra.Command {
	var f configFlags
	cmd := &cobra.Command{
		Use:   "compact --db FILE OUT",
		Short: "Write a compacted copy of a stopped server's db file to OUT",
		Long: "compact writes a compacted copy of a db file (bbolt compaction: full pages,\n" +
			"no free space) to OUT. Retention frees pages for reuse but never shrinks the\n" +
			"file; compact gives that space back. Stop the server first, compact, then\n" +
			"replace the db with OUT (keep the old file until the server runs on OUT).",
		Args: args(1, 1, "one OUT file"),
		RunE: func(cmd *cobra.Command, a2 []string) error {
			cfg, _, err := a.config(f, true)
			if err != nil {
				return err
			}
			out := a2[0]
			if out == "-" {
				// backup takes - as stdout; a compacted copy is built in a file.
				return usageError("compact: OUT must be a file (- is not: a compacted copy cannot be streamed; use backup for stdout)")
			}
			if sameFile(cfg.DB, out) {
				return usageError("compact: OUT %s is the db itself", out)
			}
			before, after, err := writeCompact(cfg.DB, out)
			if err != nil {
				return fmt.Errorf("compact: %w", err)
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "compacted %s (%d bytes) to %s (%d bytes)\n", cfg.DB, before, out, after)
			return err
		},
	}
	addConfigFlags(cmd, &f)
	return cmd
}

// writeCompact compacts db into a temporary file beside out and renames it
// into place, so out is never a partial copy. It returns both sizes.
func writeCompact(db, out string) (before, after int64, err error) {
	unlock, err := lockOut(out)
	if err != nil {
		return 0, 0, err
	}
	defer unlock()
	tmp, err := createTempBeside(out, "compact")
	if err != nil {
		return 0, 0, err
	}
	name := tmp.Name()
	defer os.Remove(name)
	if err := tmp.Close(); err != nil {
		return 0, 0, err
	}
	if err := store.Compact(db, name); err != nil {
		return 0, 0, err
	}
	src, err := os.Stat(db)
	if err != nil {
		return 0, 0, err
	}
	dst, err := os.Stat(name)
	if err != nil {
		return 0, 0, err
	}
	return src.Size(), dst.Size(), os.Rename(name, out)
}
