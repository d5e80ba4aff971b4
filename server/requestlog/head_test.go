package requestlog_test

import (
	"strings"
	"testing"

	"github.com/complybox/complybox/server/requestlog"
)

// head feeds body to a Head in chunks of size n (0: at once).
func head(body string, n int) string {
	var h requestlog.Head
	if n == 0 {
		n = len(body) + 1
	}
	for i := 0; i < len(body); i += n {
		h.Write([]byte(body[i:min(i+n, len(body))]))
	}
	return string(h.Bytes())
}

// TestHeadKeepsEveryField: in a JSON body longer than MaxBody a string
// longer than LongString is kept as a note of its size and the fields
// after it are kept; a body that fits in MaxBody is kept whole, long
// strings too (SPEC §7: bodies are cut at 4 KiB, nothing shorter); escapes
// (a quote inside a string, a backslash at a chunk's end) do not end a
// string early; other bodies keep their first MaxBody bytes; the result
// is the same however the body arrives in chunks.
func TestHeadKeepsEveryField(t *testing.T) {
	t.Parallel()
	img := strings.Repeat("QUJD", 50_000)                // 200,000 bytes of base64
	text := strings.Repeat("é", requestlog.LongString/2) // 1 KiB of text exactly
	quoted := `a \"quoted\" \\ word`
	for _, c := range []struct{ body, want string }{
		{`{"front":"` + img + `","country":"DEU","back":"` + img + `x","n":1}`,
			`{"front":"[200000 bytes, not kept]","country":"DEU","back":"[200001 bytes, not kept]","n":1}`},
		{`{"note":"` + text + `","q":"` + quoted + `"}`, `{"note":"` + text + `","q":"` + quoted + `"}`},
		{`{"long":"` + strings.Repeat(`\"`, requestlog.LongString) + `","after":true,"p1":"` + text + `","p2":"` + text + `"}`,
			`{"long":"[2048 bytes, not kept]","after":true,"p1":"` + text + `","p2":"` + text + `"}`},
		{`{"long":"` + strings.Repeat(`\"`, requestlog.LongString) + `","after":true}`,
			`{"long":"` + strings.Repeat(`\"`, requestlog.LongString) + `","after":true}`},
		{`{"externalId":"` + img[:1500] + `"}`, `{"externalId":"` + img[:1500] + `"}`},
		{`  [{"a":"` + img + `"}]`, `  [{"a":"[200000 bytes, not kept]"}]`},
		{"name=" + img, ("name=" + img)[:requestlog.MaxBody]},
		{`{"cut":"` + img[:10], `{"cut":"` + img[:10]},
	} {
		for _, n := range []int{0, 1, 3, 4096} {
			if got := head(c.body, n); got != c.want {
				t.Errorf("chunks of %d: %.120q…, want %.120q…", n, got, c.want)
			}
		}
	}
	// Past MaxBody nothing more is kept, also of notes.
	many := "{" + strings.Repeat(`"k":"`+img[:2000]+`",`, 400) + `"end":1}`
	if got := head(many, 512); len(got) > requestlog.MaxBody || !strings.HasPrefix(got, `{"k":"[2000 bytes, not kept]","k":`) {
		t.Errorf("%d bytes kept: %.80q", len(got), got)
	}
}
