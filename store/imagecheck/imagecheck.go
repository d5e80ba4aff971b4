// Package imagecheck decodes and checks uploaded identity images and
// documents: base64 in the variants clients send, JPEG and PNG images that
// decode completely at an acceptable size, and PDF envelopes. It never
// touches the db; its errors are *fielderr.Error naming the offending field.
package imagecheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"unicode"

	"github.com/complybox/complybox/store/fielderr"
)

// Limits on uploaded images (SPEC §3.4).
const (
	MaxBytes  = 10 << 20   // decoded size of one image
	MinSide   = 200        // pixels, both width and height
	MaxPixels = 40_000_000 // refuse larger images from their header, before decoding them
)

// Content types Check recognises.
const (
	TypeJPEG = "image/jpeg"
	TypePNG  = "image/png"
	TypePDF  = "application/pdf"
)

// invalid returns a *fielderr.Error naming field.
func invalid(field, format string, args ...any) *fielderr.Error {
	return fielderr.New(field, format, args...)
}

// Image is a decoded, checked upload.
type Image struct {
	Data          []byte
	ContentType   string // image/jpeg, image/png or application/pdf
	SHA256        string // lowercase hex of Data
	Width, Height int    // 0 for PDF
}

// Decode decodes value, the base64 text of an upload in field, and
// checks it with Check. value may use the standard or the URL-safe
// alphabet, padded or not, may contain whitespace and line breaks, and may
// start with a "data:<type>;base64," prefix whose type is ignored: the
// content type is sniffed from the bytes. Returns a *fielderr.Error naming field.
func Decode(field, value string, allowPDF bool) (Image, error) {
	return decode(field, value, allowPDF, nil, false)
}

// DecodeHeader is Decode without decoding the pixels: base64, format, size
// and the dimensions read from the header. Whoever stores the image checks
// it completely later.
func DecodeHeader(field, value string, allowPDF bool) (Image, error) {
	return decode(field, value, allowPDF, nil, true)
}

func decode(field, value string, allowPDF bool, lim *Limiter, headerOnly bool) (Image, error) {
	data, err := decodeBase64(field, value)
	if err != nil {
		return Image{}, err
	}
	return check(field, data, allowPDF, lim, headerOnly)
}

// decodeBase64 decodes the base64 text of field, tolerating the variants
// Decode accepts. It refuses text that would decode past MaxBytes
// before allocating for it.
func decodeBase64(field, value string) ([]byte, error) {
	trimmed := strings.TrimLeftFunc(value, unicode.IsSpace)
	base := len(value) - len(trimmed) // offset of value in the text as sent
	value = strings.TrimRightFunc(trimmed, unicode.IsSpace)
	if len(value) >= 5 && strings.EqualFold(value[:5], "data:") {
		comma := strings.IndexByte(value, ',')
		if comma < 0 {
			return nil, invalid(field, "%s has a data: prefix without a comma before the data", field)
		}
		header := strings.ToLower(strings.ReplaceAll(value[:comma], " ", ""))
		if !strings.HasSuffix(header, ";base64") {
			return nil, invalid(field, "%s must be base64-encoded: its data: prefix must end in ;base64", field)
		}
		value = value[comma+1:]
		base += comma + 1
	}

	// Count the base64 characters first so that an oversized upload is
	// refused without building a copy of it. Offsets in messages count from
	// the start of the value as sent.
	n, pad, padAt := 0, 0, -1
	std, url := -1, -1 // offset of the first character unique to each alphabet
	for i := 0; i < len(value); i++ {
		c := value[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			continue
		case c == '=':
			if pad == 0 {
				padAt = i
			}
			pad++
			continue
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '+' || c == '/':
			if std < 0 {
				std = i
			}
		case c == '-' || c == '_':
			if url < 0 {
				url = i
			}
		default:
			return nil, invalid(field, "%s is not valid base64: unexpected character %s at offset %d", field, quoteByte(c), base+i)
		}
		if pad > 0 {
			return nil, invalid(field, "%s is not valid base64: padding '=' in the middle at offset %d", field, base+padAt)
		}
		n++
	}
	switch {
	case n == 0:
		return nil, invalid(field, "%s is empty", field)
	case std >= 0 && url >= 0:
		return nil, invalid(field, "%s is not valid base64: it mixes the standard (+/) and URL-safe (-_) alphabets", field)
	case pad > 2 || n%4 == 1 || (pad > 0 && (n+pad)%4 != 0):
		return nil, invalid(field, "%s is not valid base64: its length or padding is wrong (truncated?)", field)
	}
	if size := n * 3 / 4; size > MaxBytes {
		return nil, invalid(field, "%s is %d bytes decoded; at most 10 MiB (%d bytes) is allowed", field, size, MaxBytes)
	}

	compact := make([]byte, 0, n)
	for i := 0; i < len(value); i++ {
		if c := value[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '=' {
			compact = append(compact, c)
		}
	}
	enc := base64.RawStdEncoding
	if url >= 0 {
		enc = base64.RawURLEncoding
	}
	data := make([]byte, enc.DecodedLen(len(compact)))
	got, err := enc.Decode(data, compact)
	if err != nil {
		return nil, invalid(field, "%s is not valid base64", field)
	}
	return data[:got], nil
}

// quoteByte shows c in an error message.
func quoteByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return "'" + string(rune(c)) + "'"
	}
	return "0x" + hex.EncodeToString([]byte{c})
}

// Check checks the decoded bytes of an upload in field: at most 10 MiB,
// a JPEG or PNG image of at least 200×200 pixels that decodes completely, or,
// when allowPDF, a PDF that starts with %PDF- and ends with %%EOF. The
// content type comes from the bytes alone. Returns a *fielderr.Error naming field.
func Check(field string, data []byte, allowPDF bool) (Image, error) {
	return check(field, data, allowPDF, nil, false)
}

// check is Check, decoding pixels within lim's budget (nil: unbounded), or
// not at all when headerOnly.
func check(field string, data []byte, allowPDF bool, lim *Limiter, headerOnly bool) (Image, error) {
	if len(data) == 0 {
		return Image{}, invalid(field, "%s is empty", field)
	}
	if len(data) > MaxBytes {
		return Image{}, invalid(field, "%s is %d bytes; at most 10 MiB (%d bytes) is allowed", field, len(data), MaxBytes)
	}
	img := Image{Data: data, ContentType: sniffImage(data)}
	switch img.ContentType {
	case TypeJPEG, TypePNG:
		w, h, err := checkRaster(field, img.ContentType, data, lim, headerOnly)
		if err != nil {
			return Image{}, err
		}
		img.Width, img.Height = w, h
	case TypePDF:
		if !allowPDF {
			return Image{}, invalid(field, "%s must be a JPEG or PNG image; PDF is accepted for documents only", field)
		}
		if err := checkPDF(field, data); err != nil {
			return Image{}, err
		}
	default:
		what := ""
		if kind := otherFormat(data); kind != "" {
			what = " (it is " + kind + ")"
		}
		if allowPDF {
			return Image{}, invalid(field, "%s must be a JPEG or PNG image or a PDF document%s", field, what)
		}
		return Image{}, invalid(field, "%s must be a JPEG or PNG image%s", field, what)
	}
	sum := sha256.Sum256(data)
	img.SHA256 = hex.EncodeToString(sum[:])
	return img, nil
}

// Leading bytes of the accepted formats.
const (
	magicJPEG = "\xff\xd8\xff"
	magicPNG  = "\x89PNG\r\n\x1a\n"
	magicPDF  = "%PDF-"
)

// sniffImage returns the content type of data from its leading bytes, or ""
// when it is none of the accepted formats.
func sniffImage(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte(magicJPEG)):
		return TypeJPEG
	case bytes.HasPrefix(data, []byte(magicPNG)):
		return TypePNG
	case bytes.HasPrefix(data, []byte(magicPDF)):
		return TypePDF
	}
	return ""
}

// otherFormat names common formats that are refused, so that the error can
// tell the caller what they sent.
func otherFormat(data []byte) string {
	switch {
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return "a GIF image"
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return "a WebP image"
	case len(data) >= 12 && string(data[4:8]) == "ftyp":
		switch string(data[8:12]) {
		case "heic", "heix", "hevc", "heim", "heis", "mif1", "msf1":
			return "a HEIC/HEIF image"
		case "avif", "avis":
			return "an AVIF image"
		}
	case bytes.HasPrefix(data, []byte("BM")) && len(data) >= 26:
		return "a BMP image"
	case bytes.HasPrefix(data, []byte("II*\x00")), bytes.HasPrefix(data, []byte("MM\x00*")):
		return "a TIFF image"
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		return "a ZIP archive"
	}
	return ""
}

// pngPixelsPerByte and jpegPixelsPerByte bound how many pixels a complete
// image of each format can describe per byte of input, with generous
// margins: deflate expands at most 1032 times and a PNG pixel takes at least
// one bit; a JPEG spends at least one bit on each 8×8 block of a component
// that may be subsampled 4×4. An image that declares more pixels than its
// size allows is truncated or a decompression bomb, and is refused before
// memory is allocated for it.
const (
	pngPixelsPerByte  = 8 * 1032
	jpegPixelsPerByte = 8 * 64 * 16
)

// maxDecodeMemory bounds the memory the standard decoders may allocate for
// one upload. Every 40-megapixel 8-bit image fits; a progressive JPEG or a
// 16-bit PNG needs several times more memory per pixel and is refused
// sooner.
const maxDecodeMemory = 256 << 20

// checkRaster checks that data, a JPEG or PNG, has an acceptable size by its
// header and, unless headerOnly, decodes completely within lim's budget; it
// returns its dimensions.
func checkRaster(field, contentType string, data []byte, lim *Limiter, headerOnly bool) (int, int, error) {
	return decodeRaster(field, contentType, data, lim, headerOnly, nil)
}

// decodeRaster is checkRaster that, after a complete decode, hands the
// decoded image to use (when not nil) while its memory is still reserved.
func decodeRaster(field, contentType string, data []byte, lim *Limiter, headerOnly bool, use func(image.Image)) (int, int, error) {
	decodeConfig, decodePixels, perByte, name := jpeg.DecodeConfig, jpeg.Decode, int64(jpegPixelsPerByte), "JPEG"
	if contentType == TypePNG {
		decodeConfig, decodePixels, perByte, name = png.DecodeConfig, png.Decode, pngPixelsPerByte, "PNG"
	}
	cfg, err := decodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, 0, rasterError(field, name, err)
	}
	w, h := cfg.Width, cfg.Height
	if w < MinSide || h < MinSide {
		return 0, 0, invalid(field, "%s is %d×%d pixels; at least %d×%d are required", field, w, h, MinSide, MinSide)
	}
	pixels := int64(w) * int64(h)
	if pixels > MaxPixels {
		return 0, 0, invalid(field, "%s is %d×%d pixels; at most %d megapixels are allowed", field, w, h, MaxPixels/1_000_000)
	}
	if pixels > int64(len(data))*perByte {
		return 0, 0, invalid(field, "%s is truncated or corrupt: %d bytes cannot hold a %d×%d %s image", field, len(data), w, h, name)
	}
	var memory int64
	if contentType == TypePNG {
		memory = pixels * pngBytesPerPixel(cfg)
	} else {
		memory = pixels * jpegBytesPerPixel(data) / 64
	}
	if memory > maxDecodeMemory {
		return 0, 0, invalid(field, "%s is %d×%d pixels and would need about %d MiB to decode; at most %d MiB are allowed, send a smaller image",
			field, w, h, memory>>20, maxDecodeMemory>>20)
	}
	if headerOnly {
		return w, h, nil
	}
	release, err := lim.acquire(memory)
	if err != nil {
		return 0, 0, err
	}
	defer release()
	img, err := decodePixels(bytes.NewReader(data))
	if err != nil {
		return 0, 0, rasterError(field, name, err)
	}
	if use != nil {
		use(img)
	}
	return w, h, nil
}

// pngBytesPerPixel is the size of a pixel of the image png.Decode returns
// for a PNG of the given configuration.
func pngBytesPerPixel(cfg image.Config) int64 {
	switch cfg.ColorModel {
	case color.GrayModel:
		return 1
	case color.Gray16Model:
		return 2
	case color.RGBAModel, color.NRGBAModel:
		return 4
	}
	if _, ok := cfg.ColorModel.(color.Palette); ok {
		return 1
	}
	return 8
}

// jpegBytesPerPixel estimates, in 64ths of a byte, the memory jpeg.Decode
// allocates per pixel: one byte per sample of each component, scaled by its
// subsampling; four bytes more per sample for the coefficients a
// progressive JPEG keeps; and the final image of a four-component (CMYK)
// JPEG. It reads the frame header (SOF) itself, because image.Config does
// not tell. When the header cannot be read it assumes the worst case.
func jpegBytesPerPixel(data []byte) int64 {
	const worst = 64 * (4 + 4*4 + 4)
	sof, progressive := jpegFrame(data)
	if len(sof) < 6 {
		return worst
	}
	n := int(sof[5])
	if n < 1 || len(sof) < 6+3*n {
		return worst
	}
	hmax, vmax := 1, 1
	for i := 0; i < n; i++ {
		hv := sof[6+3*i+1]
		hmax, vmax = max(hmax, int(hv>>4)), max(vmax, int(hv&15))
	}
	var samples int64 // in 64ths of a sample per pixel
	for i := 0; i < n; i++ {
		hv := sof[6+3*i+1]
		samples += int64(64 * int(hv>>4) * int(hv&15) / (hmax * vmax))
	}
	perPixel := samples
	if progressive {
		perPixel += 4 * samples
	}
	if n == 4 {
		perPixel += 64 * 4
	}
	return perPixel
}

// jpegFrame returns the body of the first start-of-frame segment of a JPEG
// (precision, height, width, component count and components) and whether it
// is progressive, walking the marker segments that precede it.
func jpegFrame(data []byte) ([]byte, bool) {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xff {
			return nil, false
		}
		marker := data[i+1]
		switch {
		case marker == 0xff: // fill byte
			i++
			continue
		case marker == 0x01 || (marker >= 0xd0 && marker <= 0xd8): // no length
			i += 2
			continue
		}
		length := int(data[i+2])<<8 | int(data[i+3])
		if length < 2 || i+2+length > len(data) {
			return nil, false
		}
		body := data[i+4 : i+2+length]
		if marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
			return body, marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce
		}
		if marker == 0xda { // start of scan before any frame
			return nil, false
		}
		i += 2 + length
	}
	return nil, false
}

// rasterError explains a decoder failure.
func rasterError(field, name string, err error) error {
	var jpegUnsupported jpeg.UnsupportedError
	var pngUnsupported png.UnsupportedError
	if errors.As(err, &jpegUnsupported) || errors.As(err, &pngUnsupported) {
		return invalid(field, "%s uses a %s feature that cannot be decoded (%s)", field, name, strings.TrimPrefix(err.Error(), strings.ToLower(name)+": "))
	}
	return invalid(field, "%s is truncated or corrupt: not a complete %s image", field, name)
}

// pdfTail is how far from the end of a PDF its %%EOF marker may be; the PDF
// specification lets readers look at the last 1024 bytes.
const pdfTail = 1024

// checkPDF checks the envelope of a PDF document: %PDF- at the start and
// %%EOF near the end.
func checkPDF(field string, data []byte) error {
	tail := data
	if len(tail) > pdfTail {
		tail = tail[len(tail)-pdfTail:]
	}
	if !bytes.Contains(tail, []byte("%%EOF")) {
		return invalid(field, "%s is truncated or corrupt: a PDF document must end with %%%%EOF", field)
	}
	return nil
}
