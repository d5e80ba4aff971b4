package imagecheck_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/complybox/complybox/store/fielderr"
	"github.com/complybox/complybox/store/imagecheck"
)

// testImage draws a w×h picture with some texture, so that encoders
// produce realistic, non-trivial data.
func testImage(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), uint8((x ^ y) & 0xff), 0xff})
		}
	}
	return img
}

func pngBytes(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, testImage(w, h)); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func jpegBytes(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, testImage(w, h), &jpeg.Options{Quality: 85}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// pdfBytes is a minimal PDF envelope.
func pdfBytes() []byte {
	return []byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n" +
		"2 0 obj << /Type /Pages /Kids [] /Count 0 >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
}

// expectInvalid fails unless err is a *fielderr.Error naming field
// whose message contains every part of want.
func expectInvalid(tb testing.TB, err error, field string, want ...string) {
	tb.Helper()
	var e *fielderr.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error = %v (%T), want *fielderr.Error", err, err)
	}
	if e.Field != field {
		tb.Fatalf("error field %q, want %q (%s)", e.Field, field, e.Message)
	}
	for _, w := range want {
		if !strings.Contains(e.Message, w) {
			tb.Fatalf("message %q does not contain %q", e.Message, w)
		}
	}
}

func TestDecodeImage(t *testing.T) {
	pngData := pngBytes(t, 300, 300)
	jpegData := jpegBytes(t, 300, 300)
	std := base64.StdEncoding.EncodeToString

	t.Run("OK_PNG", func(t *testing.T) {
		img, err := imagecheck.Decode("selfie", std(pngData), false)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(pngData)
		if img.ContentType != "image/png" || img.Width != 300 || img.Height != 300 ||
			img.SHA256 != hex.EncodeToString(sum[:]) || !bytes.Equal(img.Data, pngData) {
			t.Fatalf("got %s %d×%d sha %s", img.ContentType, img.Width, img.Height, img.SHA256)
		}
	})
	t.Run("OK_JPEG", func(t *testing.T) {
		img, err := imagecheck.Decode("documentFront", std(jpegData), true)
		if err != nil {
			t.Fatal(err)
		}
		if img.ContentType != "image/jpeg" || img.Width != 300 || img.Height != 300 || !bytes.Equal(img.Data, jpegData) {
			t.Fatalf("got %s %d×%d", img.ContentType, img.Width, img.Height)
		}
	})
	t.Run("OK_NotSquare", func(t *testing.T) {
		img, err := imagecheck.Decode("selfie", std(pngBytes(t, 640, 200)), false)
		if err != nil || img.Width != 640 || img.Height != 200 {
			t.Fatalf("got %d×%d, %v", img.Width, img.Height, err)
		}
	})
	t.Run("OK_Variants", func(t *testing.T) {
		// Pick bytes whose base64 uses both '+' and '/' so that the
		// alphabets really differ, and whose length needs padding.
		data := jpegData
		s := std(data)
		if !strings.ContainsAny(s, "+/") || !strings.HasSuffix(s, "=") {
			data = append(append([]byte{}, jpegData...), 0xfb, 0xff) // trailing bytes after EOI are ignored
			s = std(data)
		}
		if !strings.ContainsAny(s, "+") || !strings.ContainsAny(s, "/") || !strings.HasSuffix(s, "=") {
			t.Fatalf("test data does not exercise both alphabets and padding")
		}
		mime := base64.StdEncoding.EncodeToString(data)
		var wrapped strings.Builder
		for i := 0; i < len(mime); i += 76 {
			wrapped.WriteString(mime[i:min(i+76, len(mime))])
			wrapped.WriteString("\r\n")
		}
		for name, value := range map[string]string{
			"std padded":      s,
			"std raw":         base64.RawStdEncoding.EncodeToString(data),
			"url padded":      base64.URLEncoding.EncodeToString(data),
			"url raw":         base64.RawURLEncoding.EncodeToString(data),
			"mime lines":      wrapped.String(),
			"spaces":          "  \n\t" + strings.Join(strings.SplitAfter(s, "AAAA"), " ") + " \n",
			"data prefix":     "data:image/jpeg;base64," + s,
			"wrong data type": "data:image/png;base64," + base64.RawURLEncoding.EncodeToString(data),
			"upper DATA":      "DATA:IMAGE/JPEG;BASE64," + s,
			"data no type":    "data:;base64," + s,
			"data spaced":     "data:image/jpeg; base64, " + s,
		} {
			img, err := imagecheck.Decode("documentFront", value, false)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if img.ContentType != "image/jpeg" || !bytes.Equal(img.Data, data) {
				t.Fatalf("%s: got %s, %d bytes", name, img.ContentType, len(img.Data))
			}
		}
	})
	t.Run("ErrTooSmall", func(t *testing.T) {
		_, err := imagecheck.Decode("selfie", std(pngBytes(t, 10, 10)), false)
		expectInvalid(t, err, "selfie", "selfie is 10×10 pixels; at least 200×200 are required")
		_, err = imagecheck.Decode("selfie", std(jpegBytes(t, 300, 199)), false)
		expectInvalid(t, err, "selfie", "300×199 pixels")
	})
	t.Run("ErrTruncatedPNG", func(t *testing.T) {
		for _, cut := range []int{len(pngData) / 2, len(pngData) - 12, len(pngData) - 1, 40} {
			_, err := imagecheck.Decode("documentFront", std(pngData[:cut]), true)
			expectInvalid(t, err, "documentFront", "documentFront is truncated or corrupt")
		}
	})
	t.Run("ErrTruncatedJPEG", func(t *testing.T) {
		for _, cut := range []int{len(jpegData) / 2, len(jpegData) - 2, 200} {
			_, err := imagecheck.Decode("documentBack", std(jpegData[:cut]), true)
			expectInvalid(t, err, "documentBack", "documentBack is truncated or corrupt")
		}
	})
	t.Run("ErrCorruptPNG", func(t *testing.T) {
		bad := append([]byte{}, pngData...)
		bad[len(bad)/2] ^= 0xff // the chunk CRC no longer matches
		_, err := imagecheck.Decode("selfie", std(bad), false)
		expectInvalid(t, err, "selfie", "truncated or corrupt")
	})
	t.Run("ErrBase64", func(t *testing.T) {
		for value, want := range map[string]string{
			"not base64 at all!":                   "documentFront is not valid base64",
			"QUJD*RUY=":                            "unexpected character '*' at offset 4",
			"QU=JD":                                "padding",
			"QUJDR":                                "length or padding",
			"QUJDRA===":                            "length or padding",
			"ab+c/d-_":                             "mixes",
			"data:image/png,iVBORw0KGgo":           "must be base64-encoded",
			"data:image/png;base64":                "without a comma",
			"QUJD\x00":                             "0x00",
			"\u00e9t\u00e9":                        "not valid base64",
			base64.StdEncoding.EncodeToString(nil): "documentFront is empty",
		} {
			_, err := imagecheck.Decode("documentFront", value, true)
			expectInvalid(t, err, "documentFront", want)
		}
		_, err := imagecheck.Decode("selfie", "   \n", false)
		expectInvalid(t, err, "selfie", "selfie is empty")
	})
	t.Run("ErrNotAnImage", func(t *testing.T) {
		for data, want := range map[string]string{
			"hello, this is text":                      "selfie must be a JPEG or PNG image",
			"\xff\xd8\xff\xe0 JFIF but really a text":  "selfie is truncated or corrupt",
			"\x89PNG\r\n\x1a\n and then text":          "selfie is truncated or corrupt",
			"GIF89a\x01\x00\x01\x00":                   "it is a GIF image",
			"RIFF\x00\x00\x00\x00WEBPVP8 ":             "it is a WebP image",
			"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00": "it is a HEIC/HEIF image",
		} {
			_, err := imagecheck.Decode("selfie", std([]byte(data)), false)
			expectInvalid(t, err, "selfie", want)
		}
	})
	t.Run("PDF", func(t *testing.T) {
		img, err := imagecheck.Decode("proofOfAddress", "data:application/pdf;base64,"+std(pdfBytes()), true)
		if err != nil {
			t.Fatal(err)
		}
		if img.ContentType != "application/pdf" || img.Width != 0 || img.Height != 0 || img.SHA256 == "" {
			t.Fatalf("got %+v", img)
		}
		_, err = imagecheck.Decode("selfie", std(pdfBytes()), false)
		expectInvalid(t, err, "selfie", "selfie must be a JPEG or PNG image; PDF is accepted for documents only")

		noEOF := bytes.TrimSuffix(pdfBytes(), []byte("%%EOF\n"))
		_, err = imagecheck.Decode("documentFront", std(noEOF), true)
		expectInvalid(t, err, "documentFront", "truncated or corrupt", "%%EOF")

		farEOF := append(pdfBytes(), bytes.Repeat([]byte("x"), 2000)...)
		_, err = imagecheck.Decode("documentFront", std(farEOF), true)
		expectInvalid(t, err, "documentFront", "%%EOF")

		_, err = imagecheck.Decode("documentFront", std([]byte("just text")), true)
		expectInvalid(t, err, "documentFront", "must be a JPEG or PNG image or a PDF document")
	})
	t.Run("ErrTooLarge", func(t *testing.T) {
		big := make([]byte, 10<<20+1)
		copy(big, pngData)
		_, err := imagecheck.Decode("documentFront", std(big), true)
		expectInvalid(t, err, "documentFront", "10485761 bytes", "at most 10 MiB")
		_, err = imagecheck.Check("documentFront", big, true)
		expectInvalid(t, err, "documentFront", "10485761 bytes", "at most 10 MiB")

		// Exactly 10 MiB passes the size check (and then fails as a PDF
		// without %%EOF, showing that the size was accepted).
		exact := append([]byte("%PDF-1.4\n"), make([]byte, 10<<20-9-6)...)
		exact = append(exact, "%%EOF\n"...)
		if _, err := imagecheck.Decode("documentFront", base64.RawURLEncoding.EncodeToString(exact), true); err != nil {
			t.Fatalf("exactly 10 MiB: %v", err)
		}
	})
	t.Run("ErrBomb", func(t *testing.T) {
		// A real PNG whose header claims 6000×6000 pixels: the few bytes
		// that follow cannot hold them, so it is refused before the
		// decoder allocates 36 megapixels.
		_, err := imagecheck.Check("selfie", withPNGSize(t, pngBytes(t, 200, 200), 6000, 6000), false)
		expectInvalid(t, err, "selfie", "truncated or corrupt", "6000×6000")

		_, err = imagecheck.Check("selfie", withPNGSize(t, pngBytes(t, 200, 200), 10000, 6000), false)
		expectInvalid(t, err, "selfie", "10000×6000 pixels; at most 40 megapixels")
	})
	t.Run("ErrDecodeMemory", func(t *testing.T) {
		// 36 megapixels of 16-bit RGBA would take 8 bytes each.
		var buf bytes.Buffer
		deep := image.NewNRGBA64(image.Rect(0, 0, 200, 200))
		noise := rand.New(rand.NewPCG(1, 2)) // incompressible
		for i := range deep.Pix {
			deep.Pix[i] = uint8(noise.Uint32())
		}
		if err := png.Encode(&buf, deep); err != nil {
			t.Fatal(err)
		}
		_, err := imagecheck.Check("documentFront", withPNGSize(t, buf.Bytes(), 6000, 6000), true)
		expectInvalid(t, err, "documentFront", "6000×6000 pixels and would need about 274 MiB to decode")

		// A progressive 4:2:0 JPEG keeps 6 bytes of coefficients per pixel
		// on top of its 1.5 byte image: 49 megapixels are too many, while a
		// baseline JPEG of that size would be decoded.
		progressive := withJPEGFrame(t, jpegBytes(t, 300, 300), 0xc2, 6000, 6000)
		_, err = imagecheck.Check("documentFront", progressive, true)
		expectInvalid(t, err, "documentFront", "6000×6000 pixels and would need about 257 MiB to decode")
		baseline := withJPEGFrame(t, jpegBytes(t, 300, 300), 0xc0, 6000, 6000)
		_, err = imagecheck.Check("documentFront", baseline, true)
		expectInvalid(t, err, "documentFront", "truncated or corrupt: not a complete JPEG")
	})
}

// withPNGSize rewrites the IHDR of a PNG to declare w×h pixels, with a valid
// chunk checksum.
func withPNGSize(tb testing.TB, data []byte, w, h uint32) []byte {
	tb.Helper()
	out := append([]byte{}, data...)
	if string(out[12:16]) != "IHDR" {
		tb.Fatal("no IHDR")
	}
	binary.BigEndian.PutUint32(out[16:], w)
	binary.BigEndian.PutUint32(out[20:], h)
	binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
	return out
}

// withJPEGFrame rewrites the start-of-frame marker of a JPEG made by
// image/jpeg (baseline, three components 4:2:0) to marker and w×h pixels.
func withJPEGFrame(tb testing.TB, data []byte, marker byte, w, h uint16) []byte {
	tb.Helper()
	out := append([]byte{}, data...)
	i := bytes.Index(out, []byte{0xff, 0xc0, 0x00, 0x11, 0x08})
	if i < 0 {
		tb.Fatal("no SOF0")
	}
	out[i+1] = marker
	binary.BigEndian.PutUint16(out[i+5:], h)
	binary.BigEndian.PutUint16(out[i+7:], w)
	return out
}

func TestCheckImage(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		data := jpegBytes(t, 200, 200)
		img, err := imagecheck.Check("livenessFrames[0]", data, false)
		if err != nil || img.ContentType != "image/jpeg" || img.Width != 200 {
			t.Fatalf("got %+v, %v", img.ContentType, err)
		}
	})
	t.Run("ErrEmpty", func(t *testing.T) {
		_, err := imagecheck.Check("livenessFrames[1]", nil, false)
		expectInvalid(t, err, "livenessFrames[1]", "livenessFrames[1] is empty")
	})
}

// FuzzDecodeImage feeds arbitrary text to DecodeImage: it must never panic,
// fail only with EINVALID naming the field, and accept only images that
// satisfy every rule.
func FuzzDecodeImage(f *testing.F) {
	// Seeds are in testdata/fuzz/FuzzDecodeImage: small valid images
	// (gray and paletted PNG, gray and colour JPEG, PDF) in several
	// encodings, and broken ones. Small seeds keep the fuzzer fast.
	f.Add("QUJD\n=", true)
	f.Fuzz(func(t *testing.T, value string, allowPDF bool) {
		img, err := imagecheck.Decode("documentFront", value, allowPDF)
		checkAccepted(t, img, err, allowPDF)
		if err == nil {
			again, err := imagecheck.Check("documentFront", img.Data, allowPDF)
			if err != nil || again.SHA256 != img.SHA256 || again.ContentType != img.ContentType {
				t.Fatalf("CheckImage disagrees with DecodeImage: %v", err)
			}
		}
	})
}

// FuzzCheckImage feeds arbitrary bytes to CheckImage, which reaches deeper
// into the JPEG and PNG decoders than base64 text does.
func FuzzCheckImage(f *testing.F) {
	// Seeds are in testdata/fuzz/FuzzCheckImage.
	f.Add(pdfBytes(), false)
	f.Fuzz(func(t *testing.T, data []byte, allowPDF bool) {
		img, err := imagecheck.Check("selfie", data, allowPDF)
		if err != nil {
			expectInvalid(t, err, "selfie")
			return
		}
		checkAccepted(t, img, nil, allowPDF)
		if !bytes.Equal(img.Data, data) {
			t.Fatal("CheckImage changed the data")
		}
	})
}

// checkAccepted fails unless err is an EINVALID error naming documentFront,
// or img satisfies every rule of an upload.
func checkAccepted(t *testing.T, img imagecheck.Image, err error, allowPDF bool) {
	t.Helper()
	if err != nil {
		expectInvalid(t, err, "documentFront")
		return
	}
	sum := sha256.Sum256(img.Data)
	if img.SHA256 != hex.EncodeToString(sum[:]) || len(img.Data) > 10<<20 || len(img.Data) == 0 {
		t.Fatalf("accepted %d bytes with sha %s", len(img.Data), img.SHA256)
	}
	switch img.ContentType {
	case "image/jpeg", "image/png":
		if img.Width < 200 || img.Height < 200 {
			t.Fatalf("accepted %d×%d", img.Width, img.Height)
		}
	case "application/pdf":
		if !allowPDF || !bytes.HasPrefix(img.Data, []byte("%PDF-")) {
			t.Fatalf("accepted a PDF with allowPDF=%v", allowPDF)
		}
	default:
		t.Fatalf("accepted content type %q", img.ContentType)
	}
}

func BenchmarkDecodeImage(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"JPEG_3000x2000", jpegBytes(b, 3000, 2000)},
		{"PNG_1500x1000", pngBytes(b, 1500, 1000)},
	} {
		value := base64.StdEncoding.EncodeToString(c.data)
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := imagecheck.Decode("documentFront", value, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
