package console

import (
	"bytes"
	"html/template"
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// TestSecretText: a secret shown once is written as its own bytes, so a
// script scraping the page reads it right; anything else is escaped.
func TestSecretText(t *testing.T) {
	t.Parallel()
	tpl := template.Must(template.New("s").Funcs((&Console{}).funcs()).Parse(`<pre class="secret">{{secret .}}</pre>`))
	for in, want := range map[string]string{
		"ab+/cd==":          `<pre class="secret">ab+/cd==</pre>`,
		"sbx_secret_Ab-9":   `<pre class="secret">sbx_secret_Ab-9</pre>`,
		"<b>not base64</b>": `<pre class="secret">&lt;b&gt;not base64&lt;/b&gt;</pre>`,
		"a+b c":             `<pre class="secret">a&#43;b c</pre>`,
	} {
		var buf bytes.Buffer
		if err := tpl.Execute(&buf, in); err != nil {
			t.Fatal(err)
		}
		if buf.String() != want {
			t.Errorf("secret %q renders %s, want %s", in, buf.String(), want)
		}
	}
}

// TestConsoleBack: the environment switch returns to a console page of
// the new environment, never elsewhere.
func TestConsoleBack(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                                     "/console",
		"/console":                             "/console",
		"/console/applicants?q=ada&cursor=AAA": "/console/applicants?q=ada",
		"/console/applicants/ada":              "/console/applicants",
		"/console/deliveries/x/y":              "/console/deliveries",
		"//evil.example/console":               "/console",
		"https://evil.example/console":         "/console",
		"/console/../../x":                     "/console",
		"/console/..":                          "/console",
		"/consoleevil":                         "/console",
		"/console\r\nX-Injected: 1":            "/console",
		"/console/%2e%2e/x":                    "/console",
	} {
		if got := consoleBack(in, store.Sandbox); got != want {
			t.Errorf("consoleBack(%q) = %q, want %q", in, got, want)
		}
	}
	// The test clock exists only in the sandbox: switching to production
	// from it returns home, not to a 403.
	for env, want := range map[store.Env]string{store.Sandbox: "/console/clock", store.Production: "/console"} {
		if got := consoleBack("/console/clock?ok=moved", env); got != want {
			t.Errorf("consoleBack(clock, %s) = %q, want %q", env, got, want)
		}
	}
}

// TestWords: codes read as words, abbreviations in capitals ("Pep" and
// "Id invalid" read wrong), and a record's list values as a list, not
// JSON.
func TestWords(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]string{"SELFIE_MISMATCH": "Selfie mismatch", "PEP": "PEP", "ID_INVALID": "ID invalid",
		"COMPANY_NOT_VALIDATED_BENEFICIARIES": "Company not validated beneficiaries", "aml": "AML", "": ""} {
		if got := humanize(code); got != want {
			t.Errorf("humanize(%q) = %q, want %q", code, got, want)
		}
	}
	fs := recordFields(map[string]any{"roles": []string{"ubo", "director"}, "fullName": "Ann Owner", "pct": 25})
	got := map[string]string{}
	for _, f := range fs {
		got[f.Name] = f.Value
	}
	if got["roles"] != "ubo, director" || got["fullName"] != "Ann Owner" || got["pct"] != "25" {
		t.Errorf("record fields %v", got)
	}
}

// TestFormsSayTheirEnvironment: every form that posts to the console
// carries formFields (the CSRF token and the environment its page
// showed), which Page requires; only the login, the environment switch
// and log out go without the environment.
func TestFormsSayTheirEnvironment(t *testing.T) {
	t.Parallel()
	form := regexp.MustCompile(`(?s)<form[^>]*method="post"[^>]*action="([^"]*)".*?</form>`)
	exempt := map[string]bool{"/console/login": true, "/console/env": true, "/console/logout": true}
	names, err := fs.Glob(consoleFiles, "templates/*.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := fs.ReadFile(consoleFiles, name)
		if err != nil {
			t.Fatal(err)
		}
		forms := form.FindAllStringSubmatch(string(b), -1)
		if want := strings.Count(string(b), `method="post"`); len(forms) != want {
			t.Fatalf("%s: read %d of its %d forms: the pattern no longer reads the templates", name, len(forms), want)
		}
		for _, m := range forms {
			if !exempt[m[1]] && !strings.Contains(m[0], `{{template "formFields" $}}`) {
				t.Errorf("%s: the form posting to %s lacks {{template \"formFields\" $}}", name, m[1])
			}
		}
	}
}
