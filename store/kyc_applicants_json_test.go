package store

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

var (
	rawSamples    = []string{`"s"`, `true`, `null`, `12.5`, `[1, 2 ]`, `{"b": 1, "a": "<x> & y"}`}
	numberSamples = []string{"0", "25", "12.5", "0.01"}
)

// fill sets every settable field that v holds, recursively, to random
// values (pickString's samples, nil and empty lists and maps, zero and set
// times), so that a field added to a type is encoded by the test too.
func fill(r *rand.Rand, v reflect.Value) {
	switch v.Type() {
	case reflect.TypeFor[Time]():
		v.Set(reflect.ValueOf(pickTime(r)))
		return
	case reflect.TypeFor[json.RawMessage]():
		v.Set(reflect.ValueOf(json.RawMessage(rawSamples[r.IntN(len(rawSamples))])))
		return
	case reflect.TypeFor[json.Number]():
		v.Set(reflect.ValueOf(json.Number(numberSamples[r.IntN(len(numberSamples))])))
		return
	}
	switch v.Kind() {
	case reflect.String:
		if r.IntN(4) == 0 {
			v.SetString("")
		} else {
			v.SetString(pickString(r))
		}
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int:
		v.SetInt(int64(r.IntN(3)) * r.Int64N(1000))
	case reflect.Uint64:
		v.SetUint(r.Uint64() >> r.IntN(64))
	case reflect.Uint8:
		v.SetUint(uint64(r.IntN(256)))
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.SetZero()
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(r, p.Elem())
		v.Set(p)
	case reflect.Slice:
		switch r.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		default:
			s := reflect.MakeSlice(v.Type(), 1+r.IntN(3), 3)
			for i := range s.Len() {
				fill(r, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Map:
		switch r.IntN(4) {
		case 0:
			v.SetZero()
		case 1:
			v.Set(reflect.MakeMap(v.Type()))
		default:
			m := reflect.MakeMap(v.Type())
			for range 1 + r.IntN(4) {
				k := reflect.New(v.Type().Key()).Elem()
				k.SetString(pickString(r))
				e := reflect.New(v.Type().Elem()).Elem()
				fill(r, e)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				fill(r, f)
			}
		}
	default:
		panic("fill: no case for " + v.Type().String())
	}
}

// TestApplicantJSONAsEncodingJSON: the hand-written encoders of the stored
// applicant and of its API view write, byte for byte, what encoding/json
// writes for the same values — whatever fields are set, empty or nil.
func TestApplicantJSONAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		var a diskApplicant
		fill(r, reflect.ValueOf(&a).Elem())
		fill(r, reflect.ValueOf(&a.uboState).Elem()) // embedded, so not settable through a
		got, err := a.appendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "stored applicant", got, &a)

		v := a.view()
		if got, err = v.appendJSON(nil); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "applicant view", got, v)

		var w Applicant
		fill(r, reflect.ValueOf(&w).Elem())
		if got, err = w.appendJSON(nil); err != nil {
			t.Fatal(err)
		}
		sameJSON(t, "random applicant", got, w)
	}
}

// TestJSONStringAsUnmarshal: jsonString reads every JSON string value as
// json.Unmarshal does, taking its fast path or not: escapes, HTML
// characters, multi-byte and invalid UTF-8, raw control characters.
func TestJSONStringAsUnmarshal(t *testing.T) {
	raws := []string{`"a\u0041\/b"`, `"tab\tinside"`, "\"raw \xff byte\"", `"  spaced "`, `""`, `"\"q\""`}
	for _, s := range jsonSamples {
		b, _ := json.Marshal(s)
		raws = append(raws, string(b), `"`+s+`"`)
	}
	for _, raw := range raws {
		var want string
		wantErr := json.Unmarshal([]byte(raw), &want) != nil
		got, ok, err := jsonString("f", json.RawMessage(raw))
		if (err != nil) != wantErr || (!wantErr && (!ok || got != want)) {
			t.Errorf("%q: got %q, %v, %v; json.Unmarshal: %q, error %v", raw, got, ok, err, want, wantErr)
		}
	}
}
