package imagecheck_test

import (
	"bytes"
	"image"
	"image/png"
	"testing"

	"github.com/complybox/complybox/store/imagecheck"
)

// TestDecompressionBomb: a real, complete 7000×7000 RGBA PNG of zeros is
// about 190 KB and would decode to 196 MB; it is refused from its header
// (49 megapixels > 40) before any pixel is decoded, naming the field.
func TestDecompressionBomb(t *testing.T) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestCompression}
	if err := enc.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 7000, 7000))); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 400<<10 {
		t.Fatalf("the bomb is %d bytes, want a small one", buf.Len())
	}
	_, err := imagecheck.Check("livenessFrames[0]", buf.Bytes(), false)
	expectInvalid(t, err, "livenessFrames[0]", "7000×7000 pixels; at most 40 megapixels")
}
