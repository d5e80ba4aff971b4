package screening_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/complybox/complybox/store/screening"
)

func writeList(tb testing.TB, text string) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "sanctions.txt")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func TestLoadSanctions(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		path := writeList(t, "\ufeff# OFAC extract\r\nJosé García-López\r\n\n   \n  Ivan PETROV   # alias list A\nivan petrov\n\t# indented comment\nACME Trading Ltd.\n")
		list, err := screening.LoadSanctions(path)
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"José García-López", "Ivan PETROV", "ACME Trading Ltd."}
		if !slices.Equal(list, want) {
			t.Fatalf("got %q, want %q", list, want)
		}
	})
	t.Run("OK_Empty", func(t *testing.T) {
		list, err := screening.LoadSanctions(writeList(t, "# nothing yet\n\n"))
		if err != nil || len(list) != 0 {
			t.Fatalf("got %q, %v", list, err)
		}
	})
	t.Run("ErrMissing", func(t *testing.T) {
		_, err := screening.LoadSanctions(filepath.Join(t.TempDir(), "nope.txt"))
		if err == nil || !strings.Contains(err.Error(), "nope.txt") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrNoName", func(t *testing.T) {
		_, err := screening.LoadSanctions(writeList(t, "Ivan Petrov\n--- ---\n"))
		if err == nil || !strings.Contains(err.Error(), ":2:") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("ErrNotUTF8", func(t *testing.T) {
		_, err := screening.LoadSanctions(writeList(t, "Jos\xe9 Garc\xeda\n"))
		if err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestMatchSanctions(t *testing.T) {
	list := []string{"José García-López", "Ivan Petrov", "Seán O'Brien", "Nguyễn Văn Thành", "Jürgen Groß", "ACME Trading Ltd.", "राम कुमार"}
	for name, want := range map[string]bool{
		"José García-López":                   true,
		"jose garcia lopez":                   true,
		"JOSE GARCIA LOPEZ":                   true,
		"García López, José":                  true, // order-insensitive tokens
		"Jose\u0301 Garci\u0301a-Lo\u0301pez": true, // decomposed accents
		"  Ivan   Petrov ":                    true,
		"Petrov Ivan":                         true,
		"PETROV, IVAN":                        true,
		"Ivan Petrov Petrov":                  true, // same set of tokens
		"Sean OBrien":                         true,
		"Sean O’Brien":                        true,
		"nguyen van thanh":                    true,
		"Thanh Nguyen Van":                    true,
		"Jurgen Gross":                        true,
		"JÜRGEN GROẞ":                         true,
		"acme trading ltd":                    true,
		"ACME Trading Limited":                true, // the long legal form
		"Acme Trading Company Ltd":            false,
		"Acme Trading":                        false,
		"Ivan":                                false,
		"Ivan Petrova":                        false,
		"Ivan Sergeyevich Petrov":             false,
		"Jose Garcia":                         false,
		"Ivanpetrov":                          false,
		"कुमार राम":                           true,
		"राम":                                 false,
		"":                                    false,
		"...":                                 false,
	} {
		if got := screening.MatchSanctions(list, name); got != want {
			t.Errorf("MatchSanctions(%q) = %v, want %v", name, got, want)
		}
	}
	if entry, ok := screening.FindSanction(list, "lopez garcia jose"); !ok || entry != "José García-López" {
		t.Errorf("FindSanction = %q, %v", entry, ok)
	}
	if screening.MatchSanctions(nil, "Ivan Petrov") {
		t.Error("an empty list matched")
	}
}

func TestAgeOn(t *testing.T) {
	day := func(s string) time.Time {
		d, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return d.Add(12 * time.Hour)
	}
	for _, c := range []struct {
		dob, on string
		age     int
		ok      bool
	}{
		{"2000-06-15", "2018-06-14", 17, true},
		{"2000-06-15", "2018-06-15", 18, true},
		{"2000-06-15", "2018-12-31", 18, true},
		{"2000-02-29", "2018-02-28", 17, true},
		{"2000-02-29", "2018-03-01", 18, true},
		{"2000-02-29", "2020-02-29", 20, true},
		{"2024-01-01", "2024-01-01", 0, true},
		{"2024-01-02", "2024-01-01", 0, false},
		{"2001-02-29", "2024-01-01", 0, false},
		{"2000-13-01", "2024-01-01", 0, false},
		{"15/06/2000", "2024-01-01", 0, false},
		{"2000-6-15", "2024-01-01", 0, false},
		{"", "2024-01-01", 0, false},
		{"1800-01-01", "2024-01-01", 0, false},
	} {
		age, ok := screening.AgeOn(c.dob, day(c.on))
		if age != c.age || ok != c.ok {
			t.Errorf("AgeOn(%q, %s) = %d, %v; want %d, %v", c.dob, c.on, age, ok, c.age, c.ok)
		}
	}
	// The date is taken in UTC: 23:30 on the eve of the birthday in UTC is
	// already the birthday in Tokyo but does not count.
	tokyo := time.FixedZone("JST", 9*3600)
	if age, _ := screening.AgeOn("2000-06-15", time.Date(2018, 6, 15, 8, 30, 0, 0, tokyo)); age != 17 {
		t.Errorf("age in UTC = %d, want 17", age)
	}
}

func BenchmarkMatchSanctions(b *testing.B) {
	list := make([]string, 10000)
	for i := range list {
		list[i] = "Jürgen Müller-Lüdenscheidt " + strconv.Itoa(i)
	}
	for b.Loop() {
		if screening.MatchSanctions(list, "Ivan Petrov") {
			b.Fatal("matched")
		}
	}
}

// FuzzMatchSanctions checks the matching rules on arbitrary names: a name
// with a letter or digit matches itself and its words in reverse order, and
// nothing else panics.
func FuzzMatchSanctions(f *testing.F) {
	for _, s := range []string{"José García-López", "Seán O'Brien", "Nguyễn Văn Thành", "JÜRGEN GROẞ", "  ", "李 小龙", "a\u0301\u0301", "राम कुमार", "\u093e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		ok := screening.MatchSanctions([]string{name}, name)
		hasName := strings.IndexFunc(name, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mc, r) }) >= 0
		if ok != hasName {
			t.Fatalf("%q matches itself: %v", name, ok)
		}
		words := strings.Fields(name)
		slices.Reverse(words)
		if reversed := strings.Join(words, " "); ok && !screening.MatchSanctions([]string{name}, reversed) {
			t.Fatalf("%q does not match %q", reversed, name)
		}
	})
}

func TestSanctionsList(t *testing.T) {
	path := writeList(t, "Ivan Petrov\n")
	l := screening.NewSanctionsList(path)
	expect := func(want ...string) {
		t.Helper()
		names, err := l.Names()
		if err != nil || !slices.Equal(names, want) {
			t.Fatalf("Names() = %q, %v; want %q", names, err, want)
		}
	}
	expect("Ivan Petrov")
	expect("Ivan Petrov")

	// An edit of the same size is seen through the modification time.
	if err := os.WriteFile(path, []byte("Olga Petrov\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	expect("Olga Petrov")

	if err := os.WriteFile(path, []byte("# emptied\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	expect()

	if err := os.WriteFile(path, []byte("Ivan Petrov\n!!!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if names, err := l.Names(); err == nil || names != nil {
		t.Fatalf("broken list: %q, %v", names, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if names, err := l.Names(); err == nil || names != nil {
		t.Fatalf("missing list: %q, %v", names, err)
	}
}

func TestFindPerson(t *testing.T) {
	list := []string{"Ivan Petrov", "Maria Luisa Gomez"}
	for _, c := range []struct {
		first, middle, last string
		want                string
	}{
		{"Ivan", "", "Petrov", "Ivan Petrov"},
		{"Ivan", "Sergeyevich", "Petrov", "Ivan Petrov"},
		{"IVAN", " ", "PETROV", "Ivan Petrov"},
		{"Maria", "Luisa", "Gómez", "Maria Luisa Gomez"},
		{"María Luisa", "", "Gomez", "Maria Luisa Gomez"},
		{"Maria", "", "Gomez", ""},
		{"Olga", "Ivan", "Petrov", ""},
	} {
		entry, ok := screening.FindPerson(list, c.first, c.middle, c.last)
		if entry != c.want || ok != (c.want != "") {
			t.Errorf("FindPerson(%q, %q, %q) = %q, %v; want %q", c.first, c.middle, c.last, entry, ok, c.want)
		}
	}
}
