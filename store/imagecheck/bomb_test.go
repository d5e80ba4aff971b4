package imagecheck_test

import (
	"bytes"
	"image/png"
	"os"
	"testing"

	"github.com/complybox/complybox/store/imagecheck"
)

// TestDecompressionBomb: a real, complete 7000×7000 RGBA PNG of zeros
// (testdata/bomb-7000x7000.png, made by image/png at best compression; kept
// as a file because encoding it under -race takes a minute) is about 190 KB
// and would decode to 196 MB; it is refused from its header (49 megapixels
// > 40) before any pixel is decoded, naming the field.
func TestDecompressionBomb(t *testing.T) {
	bomb, err := os.ReadFile("testdata/bomb-7000x7000.png")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(bomb))
	if err != nil || cfg.Width != 7000 || cfg.Height != 7000 || len(bomb) > 400<<10 {
		t.Fatalf("the bomb is %d bytes, %dx%d (%v); want a small 7000x7000 PNG", len(bomb), cfg.Width, cfg.Height, err)
	}
	_, err = imagecheck.Check("livenessFrames[0]", bomb, false)
	expectInvalid(t, err, "livenessFrames[0]", "7000×7000 pixels; at most 40 megapixels")
}
