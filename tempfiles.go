package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// createTempBeside creates the temporary file that backup or compact (kind)
// builds its copy in, in OUT's directory so that the rename into place
// stays on one file system. The name carries this process's id,
// .complybox-KIND-PID-RANDOM, so that a later run can tell the file of a
// run killed mid-copy (kill -9, a power cut) from one still being written;
// it first removes those whose process has ended.
func createTempBeside(out, kind string) (*os.File, error) {
	dir := filepath.Dir(out)
	removeAbandoned(dir, kind)
	return os.CreateTemp(dir, fmt.Sprintf(".complybox-%s-%d-*", kind, os.Getpid()))
}

// removeAbandoned removes dir's temporary files of kind whose process has
// ended. Files it cannot judge (no process id in the name, another kind,
// a process that still runs) stay; failures to remove are left for the
// next run.
func removeAbandoned(dir, kind string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := ".complybox-" + kind + "-"
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || !processEnded(pid) {
			continue
		}
		_ = os.Remove(filepath.Join(dir, e.Name()))
	}
}
