package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/complybox/complybox/store"
)

// fuzzInner is a nested object of fuzzBody.
type fuzzInner struct {
	Name  string            `json:"name"`
	Score float64           `json:"score"`
	Tags  []string          `json:"tags"`
	Extra map[string]string `json:"extra"`
	Deep  *fuzzInner        `json:"deep"`
}

// fuzzBody has a field of every kind request bodies use.
type fuzzBody struct {
	Str      string            `json:"str"`
	StrPtr   *string           `json:"strPtr"`
	Int      int               `json:"int"`
	Int64Ptr *int64            `json:"int64Ptr"`
	Uint8    uint8             `json:"uint8"`
	Float    float64           `json:"float"`
	Bool     *bool             `json:"bool"`
	Number   json.Number       `json:"number"`
	Strings  []string          `json:"strings"`
	Ints     [3]int            `json:"ints"`
	Inner    fuzzInner         `json:"inner"`
	InnerPtr *fuzzInner        `json:"innerPtr"`
	Inners   []*fuzzInner      `json:"inners"`
	Map      map[string]any    `json:"map"`
	Any      any               `json:"any"`
	Raw      json.RawMessage   `json:"raw"`
	Raws     []json.RawMessage `json:"raws"`
	At       store.Time        `json:"at"`
	AtPtr    *store.Time       `json:"atPtr"`
}

// fuzzLimit is the body limit of the decode half of FuzzDecodeBody, small so
// that the fuzzer reaches it.
const fuzzLimit = 512

// FuzzDecodeBody feeds arbitrary bytes to DecodeBytes, and through a limited
// reader to Decode: neither may panic, and every failure must be an
// EINVALID (naming the field when a value has the wrong type) or ETOOLARGE
// *store.Error, never an internal error.
func FuzzDecodeBody(f *testing.F) {
	f.Add([]byte(`{"str":"a","strPtr":"b","int":1,"int64Ptr":-9,"uint8":255,"float":1.5e3,"bool":true,"number":12.50,` +
		`"strings":["x"],"ints":[1,2,3],"inner":{"name":"n","deep":{"tags":["t"]}},"inners":[null,{"score":2}],` +
		`"map":{"k":[1,{"z":null}]},"any":"s","raw":{"a":[1]},"raws":[1,"x"],"at":"2024-01-02T03:04:05.000Z","atPtr":null}`))
	f.Add([]byte(`{"int":"1"}`))
	f.Add([]byte(`{"uint8":256}`))
	f.Add([]byte(`{"inner":{"deep":{"deep":{"score":"high"}}}}`))
	f.Add([]byte(`{"at":"yesterday"}`))
	f.Add([]byte(`[1,2]`))
	f.Add([]byte(`{} {}`))
	f.Add([]byte(`{"str":"\ud800"}`))
	f.Add([]byte(""))
	f.Add([]byte(`{"raw":` + strings.Repeat("[", 600) + `}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var v fuzzBody
		err := DecodeBytes(body, &v)
		checkDecodeError(t, err, store.EINVALID)
		if err == nil {
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("a decoded body does not encode again: %v", err)
			}
		}

		r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		r.Body = http.MaxBytesReader(nil, r.Body, fuzzLimit)
		var w fuzzBody
		err = Decode(r, &w)
		if len(body) > fuzzLimit {
			if store.ErrorCode(err) != store.ETOOLARGE {
				t.Fatalf("a %d byte body over the %d byte limit gave %v", len(body), fuzzLimit, err)
			}
			return
		}
		checkDecodeError(t, err, store.EINVALID)
	})
}

// checkDecodeError fails unless err is nil or an *store.Error of one of the
// given codes; a wrong-type error must name its field.
func checkDecodeError(t *testing.T, err error, codes ...string) {
	t.Helper()
	if err == nil {
		return
	}
	var e *store.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *store.Error", err, err)
	}
	ok := false
	for _, c := range codes {
		ok = ok || e.Code == c
	}
	if !ok {
		t.Fatalf("error code %q (%v), want one of %q", e.Code, e, codes)
	}
	if e.Message == "" || e.Reason == "" {
		t.Fatalf("error without a reason or message: %#v", e)
	}
	if e.Reason == "validation_failed" && e.Field == "" {
		t.Fatalf("validation error names no field: %v", e)
	}
}

// TestDecodeTypeErrorsNameTheField checks the 400 of a value of the wrong
// type: it names the field (nested ones by path) and says what was expected.
func TestIntegral(t *testing.T) {
	for n, want := range map[string]string{
		"3600.0": "3600", "3.6e3": "3600", "-1E2": "-100", "6000E-1": "600", "0.0": "0",
		"-0.0": "0", "1e+2": "100", "120e-1": "12", "125e-1": "", "0.5": "", "1.000000000000000000001": "",
		"1e400": "1" + strings.Repeat("0", 400), "1e401": "", "0e-999": "", "12.3400e2": "1234",
	} {
		got, ok := integral(n)
		if ok != (want != "") || got != want {
			t.Errorf("integral(%s) = %q, %v; want %q", n, got, ok, want)
		}
	}
}

func TestDecodeTypeErrorsNameTheField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, field, want string }{
		{`{"at":"yesterday"}`, "at", "ISO 8601 timestamp"},
		{`{"at":5}`, "at", "ISO 8601 timestamp"},
		{`{"atPtr":"2026-13-01T00:00:00Z"}`, "atPtr", "ISO 8601 timestamp"},
		{`{"int":1.5}`, "int", "must be an integer"},
		{`{"int":1e30}`, "int", "out of range for an integer: 1e30"},
		{`{"int":1.25e1}`, "int", "must be an integer, not 1.25e1"},
		{`{"uint8":2.56e2}`, "uint8", "out of range for an integer: 256"},
		{`{"uint8":256}`, "uint8", "out of range for an integer: 256"},
		{`{"int":99999999999999999999}`, "int", "out of range for an integer"},
		{`{"int64Ptr":-0.5}`, "int64Ptr", "must be an integer"},
		{`{"int":"1"}`, "int", "must be of type integer, not string"},
		{`{"inner":{"deep":{"score":"high"}}}`, "inner.deep.score", "must be of type number"},
		{`{"inners":[{"name":"a"},{"name":"b","score":"x"}]}`, "inners[1].score", "must be of type number"},
		{`{"inners":[{"deep":{"tags":[1]}}]}`, "inners[0].deep.tags[0]", "must be of type string"},
		{`{"inner":{"extra":{"k":1}}}`, "inner.extra.k", "must be of type string"},
		{`{"ints":[1,2,"3"]}`, "ints[2]", "must be of type integer"},
		{` { "inners" : [ { "score" : [ ] } ] } `, "inners[0].score", "must be of type number"},
		{`{"str":1}`, "str", "must be of type string, not number"},
		{`{"strings":{}}`, "strings", "must be of type array"},
	} {
		var v fuzzBody
		err := DecodeBytes([]byte(c.body), &v)
		var e *store.Error
		if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != c.field || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: got %#v, want EINVALID field %q with %q", c.body, e, c.field, c.want)
		}
	}
	var v fuzzBody
	if err := DecodeBytes([]byte(`{"at":"2026-11-21T05:17:44.123Z","atPtr":"2026-11-21T06:17:44+01:00"}`), &v); err != nil {
		t.Fatal(err)
	}
	if v.At.String() != "2026-11-21T05:17:44.123Z" || v.AtPtr.String() != "2026-11-21T05:17:44.000Z" {
		t.Errorf("decoded %v %v", v.At, v.AtPtr)
	}
}

// TestDecodeRefusesBadText: JSON text is UTF-8 (RFC 8259), and
// encoding/json would silently turn bytes that are not (a Latin-1 "ü") and
// an escape of half a surrogate pair into U+FFFD, so a partner's name would
// be stored changed. Either is EINVALID naming the member that holds it;
// good text, surrogate pairs and escaped backslashes before "u" pass.
func TestDecodeRefusesBadText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, field string }{
		{"{\"str\":\"M\xfcller\"}", "str"},
		{"{\"inners\":[{\"name\":\"a\"},{\"name\":\"\xc3\"}]}", "inners[1].name"},
		{"{\"inner\":{\"extra\":{\"k\":\"\xff\"}}}", "inner.extra.k"},
		{`{"str":"\ud800"}`, "str"},
		{`{"strPtr":"a\udc00b"}`, "strPtr"},
		{`{"strings":["ok","\ud83dx"]}`, "strings[1]"},
		{`{"str":"\ud83d\u0041"}`, "str"},
	} {
		var v fuzzBody
		err := DecodeBytes([]byte(c.body), &v)
		var e *store.Error
		if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != c.field || !strings.Contains(e.Message, "UTF-8") {
			t.Errorf("%q: got %#v, want EINVALID naming %q", c.body, e, c.field)
		}
	}
	// A member name that is not text names no field: the body is not JSON.
	var v fuzzBody
	if err := DecodeBytes([]byte("{\"\xff\":1}"), &v); store.AsError(err).Reason != "malformed_json" {
		t.Errorf("a bad member name: %v", err)
	}
	for body, want := range map[string]string{
		`{"str":"Müller \ud83d\ude00"}`: "Müller 😀",
		`{"str":"\\ud800"}`:             `\ud800`,
		`{"str":"\u00fc"}`:              "ü",
	} {
		var v fuzzBody
		if err := DecodeBytes([]byte(body), &v); err != nil || v.Str != want {
			t.Errorf("%s: %q %v, want %q", body, v.Str, err, want)
		}
	}
}

// TestDecodeMemberNames checks what encoding/json lets pass silently: a
// member that names a struct field only when case is ignored, and a field
// given twice in one object, are 400 naming the member, and so is a member
// given twice in an object of data (a map's, one inside a value decoded by
// its own rules: questionnaire answers, whose last value would win
// silently); a member that names no field is ignored, repeated or not,
// and data is compared only with itself, never with field names.
func TestDecodeMemberNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, field, want string }{
		{`{"STR":"a"}`, "STR", "case-sensitive (str)"},
		{`{"Int":1}`, "Int", "case-sensitive (int)"},
		{`{"inner":{"Deep":{}}}`, "inner.Deep", "case-sensitive (deep)"},
		{`{"inners":[{"deep":{}},{"DEEP":{}}]}`, "inners[1].DEEP", "case-sensitive (deep)"},
		{`{"\u0053tr":"a"}`, "Str", "case-sensitive (str)"},
		{`{"str":"a","str":"b"}`, "str", "given twice"},
		{`{"str":"a", "str" :"a"}`, "str", "given twice"},
		{`{"inner":{"name":"a","score":1,"name":"b"}}`, "inner.name", "given twice"},
		{`{"map":{"k":1,"K":2,"k":3}}`, "map.k", "given twice"},
		{`{"any":{"a":[{"b":1},{"b":1}],"x":{"y":1,"y":2}}}`, "any.x.y", "given twice"},
		{`{"raw":{"a":1,"a":2}}`, "raw.a", "given twice"},
		{`{"raws":[{"x":1},{"x":{"z":1,"z":1}}]}`, "raws[1].x.z", "given twice"},
	} {
		var v fuzzBody
		err := DecodeBytes([]byte(c.body), &v)
		var e *store.Error
		if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != c.field || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: got %v, want EINVALID field %q with %q", c.body, err, c.field, c.want)
		}
	}
	// A repeat after many other members is still found.
	var b strings.Builder
	b.WriteString(`{"str":"a",`)
	for i := range 1000 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	b.WriteString(`"str":"b"}`)
	var v fuzzBody
	if err := DecodeBytes([]byte(b.String()), &v); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a repeat after 1000 members: %v", err)
	}
	for _, ok := range []string{
		`{"str":"a","strPtr":"A","unknown":1,"UNKNOWN":2,"unknown":3,"inner":{"deep":{"score":1}},"inners":[{"deep":{}},{"deep":{}}],"ints":[1,2,3]}`,
		`{"map":{"k":1,"K":2},"any":{"a":[{"b":1},{"b":1}],"x":{"y":1,"Y":2}},"raw":{"a":1,"A":2},"raws":[{"x":1},{"x":1}],"at":"2026-11-21T05:17:44.123Z"}`,
		`{"unknown":{"a":1,"a":2},"raw":{"str":1,"STR":2}}`,
		`{"str":"{\"str\":1,\"str\":2}","strings":["\"","\\"]}`,
	} {
		var v fuzzBody
		if err := DecodeBytes([]byte(ok), &v); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// membersBody is a body kept raw whose member names are a fixed set.
type membersBody map[string]json.RawMessage

func (membersBody) JSONMembers() map[string]reflect.Type {
	return map[string]reflect.Type{"name": nil, "rows": reflect.TypeFor[[]membersBody]()}
}

// TestDecodeMembers: a map body that names its members (Members) holds
// them to a struct's rules, in nested rows too; what names no member is
// ignored, repeated or not.
func TestDecodeMembers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ body, field, want string }{
		{`{"name":"a","name":"b"}`, "name", "given twice"},
		{`{"NAME":"a"}`, "NAME", "case-sensitive (name)"},
		{`{"rows":[{"name":"a"},{"name":"a","other":1,"name":"b"}]}`, "rows[1].name", "given twice"},
		{`{"rows":[{"Name":"a"}]}`, "rows[0].Name", "case-sensitive (name)"},
	} {
		var v membersBody
		err := DecodeBytes([]byte(c.body), &v)
		var e *store.Error
		if !errors.As(err, &e) || e.Code != store.EINVALID || e.Field != c.field || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: got %v, want EINVALID field %q with %q", c.body, err, c.field, c.want)
		}
	}
	var v membersBody
	if err := DecodeBytes([]byte(`{"name":"a","x":1,"x":2,"X":3,"rows":[{"name":"b","y":{"z":1,"z":2}}]}`), &v); err != nil {
		t.Fatal(err)
	}
	if string(v["name"]) != `"a"` || string(v["x"]) != "2" {
		t.Errorf("decoded %v", v)
	}
}
