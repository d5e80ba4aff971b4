package server_test

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIErrorCodesAreTheCodesTheAPISends compares, both ways, the enum
// of error codes in the document's Error schema with the reason codes the
// code of the partner API can put in an error body: every literal reason
// of store.Errorf, store.Conflict, store.NotFound ("<what>_not_found"),
// store.Invalid ("validation_failed") and Error{Reason: …} in store/ and
// server/ (with wire/, hostedui/ and requestlog/). The console's files are
// not scanned: its codes (wrong_password, csrf_token_invalid, …) are not
// partner codes. A reason built at run time must be listed in dynamic with
// the codes it can take, so that a new one cannot slip past the scan.
func TestOpenAPIErrorCodesAreTheCodesTheAPISends(t *testing.T) {
	t.Parallel()
	// dynamic maps a call site with a computed reason to the codes it yields.
	dynamic := map[string][]string{
		// setStatus: "applicant_"+status, where status is neither the target
		// nor an allowed source. Deactivate and Activate accept active or
		// deactivated applicants, so only a blocklisted one is refused.
		`Conflict("applicant_"+a.Status`: {"applicant_blocklisted"},
		// The helpers of store/errors.go themselves.
		`Reason: what + "_not_found"`:                 nil,
		`func Errorf(code, reason, format string`:     nil,
		`func NotFound(what, id string)`:              nil,
		`func Conflict(reason, format string`:         nil,
		`Reason: reason, Message: fmt.Sprintf(format`: nil,
		// hostedui turns the session's 410 into a 401 with the same code.
		`Reason: e.Reason, Message: e.Message`: nil,
	}
	// notPartner lists codes of scanned files that no partner call can get.
	notPartner := map[string]string{
		"credential_not_found": "RevokeCredential: the CLI and the console only",
		"db_not_found":         "Compact: the compact command only",
	}
	dirs := []string{"../store", ".", "wire", "hostedui", "requestlog"}
	call := regexp.MustCompile(`(?:\bErrorf\([\w.]+, |\bConflict\(|\bReason: +|\bNotFound\()`)
	literal := regexp.MustCompile(`^"([a-z_]+)"\s*[,)}]`)
	sent := map[string]string{"validation_failed": "store.Invalid"}
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no Go files in %s", dir)
		}
		for _, file := range files {
			base := filepath.Base(file)
			if strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "console_") {
				continue
			}
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, line := range strings.Split(string(src), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), "//") {
					continue
				}
				for _, loc := range call.FindAllStringIndex(line, -1) {
					head, rest := line[loc[0]:loc[1]], line[loc[1]:]
					if m := literal.FindStringSubmatch(rest); m != nil {
						if strings.HasPrefix(head, "NotFound") {
							m[1] += "_not_found"
						}
						sent[m[1]] = file
						continue
					}
					known := false
					for site, codes := range dynamic {
						if strings.Contains(line, site) {
							known = true
							for _, c := range codes {
								sent[c] = file
							}
						}
					}
					if !known {
						t.Errorf("%s: a reason computed at run time, not listed in dynamic: %s", file, strings.TrimSpace(line))
					}
				}
			}
		}
	}
	for code := range notPartner {
		delete(sent, code)
	}
	if len(sent) < 40 {
		t.Fatalf("found only %d reason codes; is the scan broken? %v", len(sent), sent)
	}

	in := start(t)
	var doc struct {
		Components struct {
			Schemas struct {
				Error struct {
					Properties struct {
						Error struct {
							Properties struct {
								Code struct {
									Enum              []string
									XEnumDescriptions map[string]string `json:"x-enumDescriptions"`
								}
							}
						}
					}
				}
			}
		}
	}
	doRequest(t, "GET", in.URL+"/openapi.json", nil).json(t, &doc)
	code := doc.Components.Schemas.Error.Properties.Error.Properties.Code
	enum := map[string]bool{}
	for _, c := range code.Enum {
		enum[c] = true
		if _, ok := sent[c]; !ok {
			t.Errorf("the document's error-code enum has %q, which the API never sends", c)
		}
	}
	var missing []string
	for c, file := range sent {
		if !enum[c] {
			missing = append(missing, c+" ("+file+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("the API sends the error code %s, which the document's enum lacks", m)
	}
	if len(code.XEnumDescriptions) > 0 {
		for _, c := range code.Enum {
			if code.XEnumDescriptions[c] == "" {
				t.Errorf("error code %q has no description", c)
			}
		}
		for c := range code.XEnumDescriptions {
			if !enum[c] {
				t.Errorf("error code %q is described but not in the enum", c)
			}
		}
	}
}
