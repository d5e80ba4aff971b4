package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCopiesRemoveWhatAKilledRunLeft checks that backup and compact, which
// build OUT in a temporary file beside it, remove the temporary files a
// run killed mid-copy (kill -9, a power cut) left in that directory, and
// leave alone those of a run still going and any other file.
func TestCopiesRemoveWhatAKilledRunLeft(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("process liveness is checked on unix only")
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "complybox.db")
	mustRun(t, "credentials", "create", "--db", db, "--env", "sandbox")

	// A pid that has ended: a child that ran and was reaped.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	// A pid that is running: a child that sleeps until the test ends.
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })

	// The copy's own temporary file names this process, so a later run
	// can judge it the same way.
	f, err := createTempBeside(filepath.Join(dir, "x.db"), "backup")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	os.Remove(f.Name())
	if want := fmt.Sprintf(".complybox-backup-%d-", os.Getpid()); !strings.HasPrefix(filepath.Base(f.Name()), want) {
		t.Errorf("temporary file %s: want the prefix %s", f.Name(), want)
	}

	for _, kind := range []string{"backup", "compact"} {
		t.Run(kind, func(t *testing.T) {
			outDir := filepath.Join(dir, kind)
			if err := os.Mkdir(outDir, 0o700); err != nil {
				t.Fatal(err)
			}
			file := func(name string) string {
				p := filepath.Join(outDir, name)
				if err := os.WriteFile(p, []byte("partial copy"), 0o600); err != nil {
					t.Fatal(err)
				}
				return p
			}
			abandoned := file(fmt.Sprintf(".complybox-%s-%d-123456", kind, gone.Process.Pid))
			running := file(fmt.Sprintf(".complybox-%s-%d-654321", kind, live.Process.Pid))
			others := []string{
				file(fmt.Sprintf(".complybox-other-%d-1", gone.Process.Pid)),
				file(".complybox-" + kind + "-987654"), // no pid: not one of ours to judge
				file("notes.txt"),
			}
			mustRun(t, kind, "--db", db, filepath.Join(outDir, "copy.db"))
			if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
				t.Errorf("%s left %s, the temporary file of a run that ended (err %v)", kind, abandoned, err)
			}
			for _, p := range append(others, running, filepath.Join(outDir, "copy.db")) {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s removed %s: %v", kind, p, err)
				}
			}
			matches, _ := filepath.Glob(filepath.Join(outDir, ".complybox-"+kind+"-*"))
			if len(matches) != 2 {
				t.Errorf("%s left %v: want only the running copy's and the one without a pid", kind, matches)
			}
		})
	}
}
