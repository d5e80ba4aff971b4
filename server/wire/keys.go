package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/complybox/complybox/store"
)

// checkKeys refuses what encoding/json would let pass silently in a body
// it decoded into a value of type t: a member name that matches a struct
// field only when case is ignored ("AMOUNT" for "amount", which
// json.Unmarshal takes as amount), and a field given twice in one object
// (json.Unmarshal keeps the last value), or a member given twice in an
// object of data (a map, such as questionnaire answers, or a value taken
// as it is: json.RawMessage, any), where the last value would win as
// silently. Either is EINVALID naming the member. Members that name no
// field are not compared: they are ignored, whatever they hold. b must be
// valid JSON: checkKeys runs after a decode succeeded.
func checkKeys(b []byte, t reflect.Type) error {
	k := keyWalk{b: b}
	return k.value(t, "")
}

// pathAt returns the path of the value of JSON text b that ends at byte
// end ("steps[1].optional", "m.k[0].kind"), the deepest when several do;
// "" when none does. encoding/json names the field of a type error by its
// struct fields only ("steps.optional"), without indexes or map keys, but
// gives the offset where the value ends.
func pathAt(b []byte, end int) string {
	k := keyWalk{b: b, end: end, locate: true}
	k.value(nil, "")
	return k.found
}

// keyWalk walks a JSON text member by member, knowing the Go type each
// value decodes into.
type keyWalk struct {
	b []byte
	i int
	// locate: only find the path of the value ending at end (pathAt),
	// into found; nothing is refused.
	locate bool
	end    int
	found  string
}

// ended notes, when locating, that the value at path ended at k.i (or,
// for an object or array, that its bracket ends there).
func (k *keyWalk) ended(path string) {
	if k.locate && k.found == "" && (k.i == k.end || k.nested() && k.i+1 == k.end) {
		k.found = path
	}
}

// field is a struct field as encoding/json names it.
type field struct {
	name string
	typ  reflect.Type
}

// Members is implemented by a body type that decodes as a map, so that
// the store sees exactly which members were sent, but whose member names
// are a fixed set all the same (store.ApplicantInput, store.UboInput):
// checkKeys holds those names to the rules of a struct's fields. Each
// name maps to the Go type its value is later decoded into, nil for a
// value taken as it is (a string, a number).
type Members interface {
	JSONMembers() map[string]reflect.Type
}

// opaque reports whether values of t decode by rules of their own (a
// json.Unmarshaler, json.RawMessage, an interface), whose members are not
// Go fields.
func opaque(t reflect.Type) bool {
	if t == nil || t.Kind() == reflect.Interface {
		return true
	}
	u := reflect.TypeFor[json.Unmarshaler]()
	return t.Implements(u) || reflect.PointerTo(t).Implements(u) ||
		t == reflect.TypeFor[json.RawMessage]()
}

func (k *keyWalk) space() {
	for k.i < len(k.b) {
		switch k.b[k.i] {
		case ' ', '\t', '\n', '\r':
			k.i++
		default:
			return
		}
	}
}

// dataType stands for a value decoded by rules of its own (opaque): its
// objects are data, whose members are compared with each other only.
var dataType = reflect.TypeFor[any]()

// value walks the value at k.i, of Go type t (nil: not a Go field, and
// ignored); path names it in errors.
func (k *keyWalk) value(t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && opaque(t) {
		t = dataType
	}
	k.space()
	if k.i >= len(k.b) {
		return nil
	}
	k.ended(path) // a composite value's type error is placed after its bracket
	switch k.b[k.i] {
	case '{':
		err := k.object(t, path)
		k.ended(path)
		return err
	case '[':
		err := k.array(t, path)
		k.ended(path)
		return err
	}
	k.scalar()
	k.ended(path)
	return nil
}

// array walks the array at k.i, decoded into t.
func (k *keyWalk) array(t reflect.Type, path string) error {
	k.i++
	var elem reflect.Type
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		elem = t.Elem()
	} else if t == dataType {
		elem = dataType
	}
	for n := 0; ; n++ {
		k.space()
		if k.i >= len(k.b) || k.b[k.i] == ']' {
			k.i++
			return nil
		}
		if k.nested() || k.locate {
			if err := k.value(elem, path+"["+strconv.Itoa(n)+"]"); err != nil {
				return err
			}
		} else {
			k.scalar()
		}
		k.space()
		if k.i < len(k.b) && k.b[k.i] == ',' {
			k.i++
		}
	}
}

// nested reports whether the value at k.i is an object or an array.
func (k *keyWalk) nested() bool {
	return k.i < len(k.b) && (k.b[k.i] == '{' || k.b[k.i] == '[')
}

// scalar skips the string, number or literal at k.i.
func (k *keyWalk) scalar() {
	if k.i < len(k.b) && k.b[k.i] == '"' {
		k.str()
		return
	}
	for k.i < len(k.b) {
		switch k.b[k.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return
		}
		k.i++
	}
}

// object walks the object at k.i, decoded into t: a member of a struct
// (or of a map that is Members) that names a field must name it exactly,
// and only once; a member of data (a map, an opaque value) only once.
func (k *keyWalk) object(t reflect.Type, path string) error {
	k.i++ // {
	// fieldList keeps the fields of every body complybox takes on the stack.
	var fieldList [32]field
	var fields []field
	var elem reflect.Type
	named := t != nil && t.Kind() == reflect.Struct // members are fields
	data := t == dataType                           // every member is a value
	if named {
		fields = jsonFields(t, fieldList[:0])
	} else if data {
		elem = dataType
	} else if t != nil && t.Kind() == reflect.Map {
		elem, data = t.Elem(), true
		if m, ok := reflect.Zero(t).Interface().(Members); ok {
			data = false
			named, elem = true, nil
			fields = fieldList[:0]
			for name, typ := range m.JSONMembers() {
				fields = append(fields, field{name, typ})
			}
		}
	}
	var seenList [16][]byte
	seen := seenList[:0] // the fields named so far
	for {
		k.space()
		if k.i >= len(k.b) || k.b[k.i] == '}' {
			k.i++
			return nil
		}
		name := k.str()
		vt := elem
		if data && !k.locate {
			for _, s := range seen {
				if bytes.Equal(s, name) {
					m := member(path, name)
					return store.Invalid(m, "%s is given twice", m)
				}
			}
			seen = append(seen, name)
		}
		if named {
			found := false
			for _, f := range fields {
				if f.name == string(name) {
					vt, found = f.typ, true
					break
				}
			}
			if !found {
				for _, f := range fields {
					if bytes.EqualFold([]byte(f.name), name) {
						m := member(path, name)
						return store.Invalid(m, "%s is not a field: field names are case-sensitive (%s)", m, f.name)
					}
				}
			} else if !k.locate {
				// Only fields are compared: what names no field is
				// ignored, repeated or not. A repeat is found at the
				// latest after as many members as the struct has fields.
				for _, s := range seen {
					if bytes.Equal(s, name) {
						m := member(path, name)
						return store.Invalid(m, "%s is given twice", m)
					}
				}
				seen = append(seen, name)
			}
		}
		k.space()
		k.i++ // :
		k.space()
		if k.nested() || k.locate {
			if err := k.value(vt, member(path, name)); err != nil {
				return err
			}
		} else {
			k.scalar()
		}
		k.space()
		if k.i < len(k.b) && k.b[k.i] == ',' {
			k.i++
		}
	}
}

// member is the path of member name of the object at path.
func member(path string, name []byte) string {
	m := string(name)
	if m == "" {
		m = `""` // a field is never named by nothing
	}
	if path != "" {
		m = path + "." + m
	}
	return m
}

// str reads the string at k.i and returns its value: a slice of k.b when
// it has no escapes.
func (k *keyWalk) str() []byte {
	start := k.i
	k.i++ // "
	escaped := false
	for k.i < len(k.b) {
		switch k.b[k.i] {
		case '\\':
			escaped = true
			k.i += 2
			continue
		case '"':
			k.i++
			if !escaped {
				return k.b[start+1 : k.i-1]
			}
			var s string
			_ = json.Unmarshal(k.b[start:k.i], &s)
			return []byte(s)
		}
		k.i++
	}
	return nil
}

// jsonFields appends the JSON names of struct t's fields to fields, as
// encoding/json names them: the tag's name, else the Go name; "-" and
// unexported fields have none; an embedded struct without a name lends
// its fields.
func jsonFields(t reflect.Type, fields []field) []field {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			fields = jsonFields(ft, fields)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, field{name, f.Type})
	}
	return fields
}
