// Package screening holds the checks a review runs on a person or company
// without the db: the sanctions list file, read again when it changes, the
// name matching against it, and the age on a date of birth.
package screening

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// LoadSanctions reads a screening list: one name per line, UTF-8, blank lines
// and comments from # to the end of the line ignored. It returns the names as
// written, trimmed, without duplicates (after normalisation). A line that
// holds no letter or digit is an error naming the line, so that a broken
// list is noticed at start-up rather than matching nothing.
func LoadSanctions(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sanctions list: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	var names []string
	seen := make(map[string]bool)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if !utf8.ValidString(text) {
			return nil, fmt.Errorf("sanctions list %s:%d: not valid UTF-8", path, line)
		}
		key := normalizeName(text)
		if key == "" {
			return nil, fmt.Errorf("sanctions list %s:%d: %q holds no name", path, line, text)
		}
		if !seen[key] {
			seen[key] = true
			names = append(names, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("sanctions list %s: %w", path, err)
	}
	return names, nil
}

// SanctionsList is a screening list file that is read again whenever it
// changes on disk (size or modification time), so that an updated list
// applies without a restart and a review does not parse the file each time.
// It is safe for concurrent use; keep one per store.
type SanctionsList struct {
	path string

	mu    sync.Mutex
	size  int64
	mod   time.Time
	names []string
}

// NewSanctionsList returns the list of the file at path, read on first use.
func NewSanctionsList(path string) *SanctionsList {
	return &SanctionsList{path: path}
}

// Names returns the names of the list as LoadSanctions reads them. It
// returns an error, and no names, when the file is missing or broken: a
// screening that cannot run must say so rather than clear everyone.
func (l *SanctionsList) Names() ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fi, err := os.Stat(l.path)
	if err != nil {
		l.names = nil
		return nil, fmt.Errorf("sanctions list: %w", err)
	}
	if l.names != nil && fi.Size() == l.size && fi.ModTime().Equal(l.mod) {
		return l.names, nil
	}
	names, err := LoadSanctions(l.path)
	if err != nil {
		l.names = nil
		return nil, err
	}
	if names == nil {
		names = []string{}
	}
	l.names, l.size, l.mod = names, fi.Size(), fi.ModTime()
	return names, nil
}

// FindPerson screens an individual: it returns the first entry of list that
// matches the full name (first, middle and last names) or, when there is a
// middle name, the name without it, since lists often omit middle names.
func FindPerson(list []string, first, middle, last string) (string, bool) {
	full := strings.Join(strings.Fields(first+" "+middle+" "+last), " ")
	if entry, ok := FindSanction(list, full); ok || normalizeName(middle) == "" {
		return entry, ok
	}
	return FindSanction(list, first+" "+last)
}

// MatchSanctions reports whether name matches an entry of list. See
// FindSanction.
func MatchSanctions(list []string, name string) bool {
	_, ok := FindSanction(list, name)
	return ok
}

// FindSanction returns the first entry of list that name matches. Names are
// compared after normalisation (case, diacritics, punctuation, whitespace):
// they match when they are equal or consist of the same set of name tokens
// in any order ("Garcia Lopez, José" matches "José García-López"), the long
// form of a legal form standing for its short one ("Limited" for "Ltd"). A name
// without any letter or digit matches nothing. It allocates nothing per
// entry, so a list of 10,000 names takes a few milliseconds.
func FindSanction(list []string, name string) (string, bool) {
	key := normalizeName(name)
	if key == "" {
		return "", false
	}
	tokens := make(map[string]int) // distinct token -> index
	for _, tok := range strings.Fields(key) {
		if short := legalForm([]byte(tok)); short != "" {
			tok = short
		}
		if _, ok := tokens[tok]; !ok {
			tokens[tok] = len(tokens)
		}
	}
	seen := make([]bool, len(tokens))
	var buf []byte
	for _, entry := range list {
		buf = appendNormalized(buf[:0], entry)
		if len(buf) == 0 {
			continue
		}
		if string(buf) == key || sameTokens(buf, tokens, seen) {
			return entry, true
		}
	}
	return "", false
}

// sameTokens reports whether the normalised name k has exactly the distinct
// tokens of tokens; seen is scratch space of len(tokens).
func sameTokens(k []byte, tokens map[string]int, seen []bool) bool {
	clear(seen)
	found := 0
	for len(k) > 0 {
		tok := k
		if i := bytes.IndexByte(k, ' '); i >= 0 {
			tok, k = k[:i], k[i+1:]
		} else {
			k = nil
		}
		i, ok := tokens[string(tok)]
		if short := legalForm(tok); short != "" {
			i, ok = tokens[short]
		}
		if !ok {
			return false
		}
		if !seen[i] {
			seen[i] = true
			found++
		}
	}
	return found == len(tokens)
}

// legalForm returns the short form lists use for the long form of a
// company's legal form (a normalised token), "" for any other token, so
// that "Acme Holdings Limited" matches "Acme Holdings Ltd".
func legalForm(tok []byte) string {
	switch string(tok) {
	case "limited":
		return "ltd"
	case "incorporated":
		return "inc"
	case "corporation":
		return "corp"
	case "company":
		return "co"
	case "aktiengesellschaft":
		return "ag"
	}
	return ""
}

// normalizeName folds a personal or company name for comparison: lower
// case, Latin diacritics and ligatures folded to ASCII (é→e, ß→ss, ø→o),
// non-spacing marks dropped (spacing marks, as in Devanagari, are kept as
// part of the word), apostrophes dropped (O'Brien → obrien), any other
// run of punctuation, symbols or whitespace turned into one space.
func normalizeName(s string) string {
	return string(appendNormalized(nil, s))
}

// appendNormalized appends the normalised form of s to b.
func appendNormalized(b []byte, s string) []byte {
	start, space := len(b), false
	for _, r := range s {
		if r < utf8.RuneSelf { // ASCII fast path
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			case r >= 'A' && r <= 'Z':
				r += 'a' - 'A'
			case r == '\'' || r == '`':
				continue
			default:
				space = true
				continue
			}
			if space && len(b) > start {
				b = append(b, ' ')
			}
			space = false
			b = append(b, byte(r))
			continue
		}
		switch {
		case r == '’' || r == '‘' || r == 'ʼ' || r == '´':
			continue
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mc, r):
			if space && len(b) > start {
				b = append(b, ' ')
			}
			space = false
			r = unicode.ToLower(r)
			if f, ok := foldLatin(r); ok {
				b = append(b, f...)
			} else {
				b = utf8.AppendRune(b, r)
			}
		default:
			space = true
		}
	}
	return b
}

// foldLatin maps a lower-case Latin letter with diacritics, or a ligature,
// to ASCII. It covers Latin-1 Supplement, Latin Extended-A, the common
// letters of Latin Extended-B and the Vietnamese letters of Latin Extended
// Additional; the standard library has no Unicode decomposition to derive
// it from.
func foldLatin(r rune) (string, bool) {
	switch r {
	case 'à', 'á', 'â', 'ã', 'ä', 'å', 'ā', 'ă', 'ą', 'ǎ', 'ǟ', 'ǡ', 'ǻ', 'ȁ', 'ȃ', 'ȧ', 'ạ', 'ả', 'ấ', 'ầ', 'ẩ', 'ẫ', 'ậ', 'ắ', 'ằ', 'ẳ', 'ẵ', 'ặ':
		return "a", true
	case 'ç', 'ć', 'ĉ', 'ċ', 'č':
		return "c", true
	case 'ď', 'đ', 'ð':
		return "d", true
	case 'è', 'é', 'ê', 'ë', 'ē', 'ĕ', 'ė', 'ę', 'ě', 'ȅ', 'ȇ', 'ȩ', 'ẹ', 'ẻ', 'ẽ', 'ế', 'ề', 'ể', 'ễ', 'ệ':
		return "e", true
	case 'ĝ', 'ğ', 'ġ', 'ģ', 'ǧ', 'ǵ':
		return "g", true
	case 'ĥ', 'ħ':
		return "h", true
	case 'ì', 'í', 'î', 'ï', 'ĩ', 'ī', 'ĭ', 'į', 'ı', 'ǐ', 'ȉ', 'ȋ', 'ỉ', 'ị':
		return "i", true
	case 'ĵ', 'ǰ':
		return "j", true
	case 'ķ', 'ǩ', 'ĸ':
		return "k", true
	case 'ĺ', 'ļ', 'ľ', 'ŀ', 'ł':
		return "l", true
	case 'ñ', 'ń', 'ņ', 'ň', 'ŉ', 'ǹ':
		return "n", true
	case 'ò', 'ó', 'ô', 'õ', 'ö', 'ø', 'ō', 'ŏ', 'ő', 'ǒ', 'ǫ', 'ǭ', 'ǿ', 'ȍ', 'ȏ', 'ȫ', 'ȭ', 'ȯ', 'ȱ', 'ọ', 'ỏ', 'ố', 'ồ', 'ổ', 'ỗ', 'ộ', 'ớ', 'ờ', 'ở', 'ỡ', 'ợ', 'ơ':
		return "o", true
	case 'ŕ', 'ŗ', 'ř', 'ȑ', 'ȓ':
		return "r", true
	case 'ś', 'ŝ', 'ş', 'š', 'ș':
		return "s", true
	case 'ţ', 'ť', 'ŧ', 'ț':
		return "t", true
	case 'ù', 'ú', 'û', 'ü', 'ũ', 'ū', 'ŭ', 'ů', 'ű', 'ų', 'ư', 'ǔ', 'ǖ', 'ǘ', 'ǚ', 'ǜ', 'ȕ', 'ȗ', 'ụ', 'ủ', 'ứ', 'ừ', 'ử', 'ữ', 'ự':
		return "u", true
	case 'ŵ', 'ẁ', 'ẃ', 'ẅ':
		return "w", true
	case 'ý', 'ÿ', 'ŷ', 'ȳ', 'ỳ', 'ỵ', 'ỷ', 'ỹ':
		return "y", true
	case 'ź', 'ż', 'ž', 'ƶ':
		return "z", true
	case 'æ', 'ǣ', 'ǽ':
		return "ae", true
	case 'œ':
		return "oe", true
	case 'ß':
		return "ss", true
	case 'þ':
		return "th", true
	case 'ĳ':
		return "ij", true
	}
	return "", false
}

// AgeOn returns the age in whole years on the date of now (UTC) of a person
// born on dob (YYYY-MM-DD). Someone born on 29 February turns a year older
// on 1 March in common years. It returns false when dob is not a real
// date, lies after now, or gives an age over 150.
func AgeOn(dob string, now time.Time) (int, bool) {
	born, err := time.Parse(time.DateOnly, strings.TrimSpace(dob))
	if err != nil {
		return 0, false
	}
	now = now.UTC()
	age := now.Year() - born.Year()
	if now.Month() < born.Month() || (now.Month() == born.Month() && now.Day() < born.Day()) {
		age--
	}
	if age < 0 || age > 150 {
		return 0, false
	}
	return age, true
}
