package store

// TEMPORARY: stands in for store/images.go of branch images until it is
// merged; delete this file at the merge.

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"time"
)

// Image is a decoded, checked upload.
type Image struct {
	Data          []byte
	ContentType   string
	SHA256        string
	Width, Height int
}

// DecodeImage decodes value and checks it.
func DecodeImage(field, value string, allowPDF bool) (Image, error) {
	if i := strings.Index(value, ","); strings.HasPrefix(value, "data:") && i > 0 {
		value = value[i+1:]
	}
	value = strings.TrimRight(value, "=")
	var data []byte
	var err error
	if strings.ContainsAny(value, "-_") {
		data, err = base64.RawURLEncoding.DecodeString(value)
	} else {
		data, err = base64.RawStdEncoding.DecodeString(value)
	}
	if err != nil {
		return Image{}, Invalid(field, "%s is not valid base64", field)
	}
	return CheckImage(field, data, allowPDF)
}

// CheckImage checks raw bytes.
func CheckImage(field string, data []byte, allowPDF bool) (Image, error) {
	if len(data) > 10<<20 {
		return Image{}, Invalid(field, "%s is over 10 MiB", field)
	}
	h := sha256.Sum256(data)
	img := Image{Data: data, SHA256: hex.EncodeToString(h[:])}
	if allowPDF && bytes.HasPrefix(data, []byte("%PDF-")) {
		img.ContentType = "application/pdf"
		return img, nil
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return Image{}, Invalid(field, "%s is not a JPEG or PNG image", field)
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return Image{}, Invalid(field, "%s cannot be decoded", field)
	}
	if cfg.Width < 200 || cfg.Height < 200 {
		return Image{}, Invalid(field, "%s must be at least 200x200 pixels", field)
	}
	img.ContentType, img.Width, img.Height = "image/"+format, cfg.Width, cfg.Height
	return img, nil
}

// LoadSanctions reads a screening list.
func LoadSanctions(path string) ([]string, error) { return nil, nil }

// MatchSanctions reports a match.
func MatchSanctions(list []string, name string) bool { return false }

// AgeOn returns the age in whole years.
func AgeOn(dob string, now time.Time) (int, bool) {
	d, ok := validDate(dob)
	if !ok {
		return 0, false
	}
	age := now.Year() - d.Year()
	if now.YearDay() < d.YearDay() {
		age--
	}
	return age, true
}
