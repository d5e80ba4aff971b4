package store

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
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

// MatchSanctions reports whether name matches an entry of list. See
// FindSanction.
func MatchSanctions(list []string, name string) bool {
	_, ok := FindSanction(list, name)
	return ok
}

// FindSanction returns the first entry of list that name matches. Names are
// compared after normalisation (case, diacritics, punctuation, whitespace):
// they match when they are equal or consist of the same set of name tokens
// in any order ("Garcia Lopez, José" matches "José García-López"). A name
// without any letter or digit matches nothing.
func FindSanction(list []string, name string) (string, bool) {
	key := normalizeName(name)
	if key == "" {
		return "", false
	}
	tokens := nameTokens(key)
	for _, entry := range list {
		k := normalizeName(entry)
		if k == key || (k != "" && slices.Equal(nameTokens(k), tokens)) {
			return entry, true
		}
	}
	return "", false
}

// nameTokens returns the sorted set of the tokens of a normalised name.
func nameTokens(key string) []string {
	tokens := strings.Fields(key)
	slices.Sort(tokens)
	return slices.Compact(tokens)
}

// normalizeName folds a personal or company name for comparison: lower
// case, Latin diacritics and ligatures folded to ASCII (é→e, ß→ss, ø→o),
// combining marks dropped, apostrophes dropped (O'Brien → obrien), any other
// run of punctuation, symbols or whitespace turned into one space.
func normalizeName(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case r == '\'' || r == '’' || r == '‘' || r == '`' || r == 'ʼ' || r == '´':
			continue
		case unicode.Is(unicode.Mn, r):
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			r = unicode.ToLower(r)
			if f, ok := foldLatin(r); ok {
				b.WriteString(f)
			} else {
				b.WriteRune(r)
			}
		default:
			space = true
		}
	}
	return b.String()
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
