package server_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// clientModules returns the node_modules that .ci/run fills with the pinned
// client generators (COMPLYBOX_NODE_MODULES); without it the test is
// skipped naming the install command, or fails under CI=true.
func clientModules(t *testing.T, bins ...string) string {
	t.Helper()
	const install = "npm install --prefix DIR openapi-typescript@7.13.0 openapi-fetch@0.17.0 typescript@5.9.3, then COMPLYBOX_NODE_MODULES=DIR/node_modules"
	needTool(t, "node", "apt-get install -y nodejs npm")
	modules := os.Getenv("COMPLYBOX_NODE_MODULES")
	for _, b := range bins {
		if _, err := os.Stat(filepath.Join(modules, ".bin", b)); modules == "" || err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI needs %s in COMPLYBOX_NODE_MODULES (%q): %s", b, modules, install)
			}
			t.Skipf("no %s in COMPLYBOX_NODE_MODULES (%q): %s", b, modules, install)
		}
	}
	return modules
}

// TestGeneratedTypeScriptClient generates a client from /openapi.json with
// openapi-typescript and openapi-fetch (default options, no edits),
// compiles testdata/clients/ts/scenario.mts against it with tsc --strict
// and runs it against a live instance: an applicant, a session, verify with
// base64 images, its status, its review history's details; verify with
// questionnaire answers; a vault, a wallet, a deposit, the balance; a
// locked field cleared with null.
func TestGeneratedTypeScriptClient(t *testing.T) {
	t.Parallel()
	modules := clientModules(t, "openapi-typescript", "tsc")
	in := start(t)
	dir := t.TempDir()
	doc := doRequest(t, "GET", in.URL+"/openapi.json", nil).Body
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.json", doc)
	for _, f := range []string{"scenario.mts", "tsconfig.json", "node-shim.d.ts"} {
		b, err := os.ReadFile(filepath.Join("../testdata/clients/ts", f))
		if err != nil {
			t.Fatal(err)
		}
		write(f, b)
	}
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	images := t.TempDir()
	write("../"+filepath.Base(images)+"/front.png", pngImage(t, 240, 220, 41))
	write("../"+filepath.Base(images)+"/selfie.jpg", jpegImage(t, 220, 240, 141))
	run := func(name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "COMPLYBOX_URL="+in.URL, "COMPLYBOX_KEY="+in.Key, "COMPLYBOX_SECRET="+in.Secret, "COMPLYBOX_IMAGES="+images)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(filepath.Join(modules, ".bin", "openapi-typescript"), "openapi.json", "-o", "schema.d.ts")
	run(filepath.Join(modules, ".bin", "tsc"), "-p", "tsconfig.json")
	out := run("node", "scenario.mjs")
	t.Logf("TypeScript scenario:\n%s", out)
	if !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Errorf("the scenario did not finish: %s", out)
	}
}

// oapiCodegen is the pinned Go client generator: v2.8 reads OpenAPI 3.1's
// type arrays (["string","null"]).
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// TestGeneratedGoClient generates a Go client from /openapi.json with
// oapi-codegen (default options, no edits) into a module of its own, and
// runs testdata/clients/go/scenario.go against a live instance: an
// applicant, a session, verify with base64 images, its status; a vault, a
// wallet, a deposit, the balance; a locked field cleared with null. It
// needs the Go module proxy (as any go build of this module does).
func TestGeneratedGoClient(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("-short: generating and building a client takes a while")
	}
	in := start(t)
	dir := t.TempDir()
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("openapi.json", doRequest(t, "GET", in.URL+"/openapi.json", nil).Body)
	write("go.mod", []byte("module example.com/scenario\n\ngo 1.26\n"))
	scenario, err := os.ReadFile("../testdata/clients/go/scenario.go")
	if err != nil {
		t.Fatal(err)
	}
	write("scenario.go", scenario)
	images := t.TempDir()
	if err := os.WriteFile(filepath.Join(images, "front.png"), pngImage(t, 240, 220, 42), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(images, "selfie.jpg"), jpegImage(t, 220, 240, 142), 0o644); err != nil {
		t.Fatal(err)
	}
	// run returns what the command wrote to stdout; stderr (go's own
	// "downloading" lines on a fresh module cache) only shows on failure.
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=", "COMPLYBOX_URL="+in.URL, "COMPLYBOX_KEY="+in.Key,
			"COMPLYBOX_SECRET="+in.Secret, "COMPLYBOX_IMAGES="+images)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.Bytes())
		}
		return string(out)
	}
	write("client/client.go", []byte(run("run", oapiCodegen, "-package", "client", "openapi.json")))
	run("mod", "tidy")
	out := run("run", ".")
	t.Logf("Go scenario:\n%s", out)
	if !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Errorf("the scenario did not finish: %s", out)
	}
}
