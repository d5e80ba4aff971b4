package main

import (
	"errors"
	"fmt"
	"io/fs"
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
	f, err := os.CreateTemp(dir, fmt.Sprintf(".complybox-%s-%d-*", kind, os.Getpid()))
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		// The temporary name is the copy's own business: say what is
		// wrong with the OUT the operator named, and its directory.
		return nil, fmt.Errorf("OUT %s: cannot create a file in its directory %s: %w", out, dir, pe.Err)
	}
	return f, err
}

// fileKind names the kind of file of mode m for a message ("a directory").
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
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
