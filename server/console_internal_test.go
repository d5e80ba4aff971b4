package server

import (
	"bytes"
	"html/template"
	"testing"
)

// TestSecretText: a secret shown once is written as its own bytes, so a
// script scraping the page reads it right; anything else is escaped.
func TestSecretText(t *testing.T) {
	tpl := template.Must(template.New("s").Funcs(consoleFuncs()).Parse(`<pre class="secret">{{secret .}}</pre>`))
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
