package imagequality

import (
	"image"
	"image/color"
	"math/rand/v2"
	"slices"
	"testing"
)

func flat(w, h int, v uint8) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = v
	}
	return img
}

func noise(w, h int, seed uint64) *image.RGBA {
	r := rand.New(rand.NewPCG(seed, 1))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := uint8(r.IntN(256))
			img.Set(x, y, color.RGBA{v, uint8(r.IntN(256)), v, 255})
		}
	}
	return img
}

// TestAssess: the synthetic images of each kind of bad photo get exactly
// their problem; a noise image (texture everywhere, mid-grey on average)
// passes.
func TestAssess(t *testing.T) {
	t.Parallel()
	th := DefaultThresholds()
	for _, tc := range []struct {
		name string
		img  image.Image
		want []string
	}{
		{"Noise", noise(800, 600, 1), nil},
		{"NoiseLarge", noise(2400, 1600, 2), nil},
		{"FlatGreyIsBlurry", flat(800, 600, 128), []string{Blurry}},
		{"BlackIsTooDark", flat(800, 600, 0), []string{TooDark, Blurry}},
		{"WhiteIsOverexposed", flat(800, 600, 255), []string{Overexposed, Glare, Blurry}},
		{"Thumbnail", noise(320, 200, 3), []string{TooSmall}},
		{"PortraitCountsItsLongSide", noise(600, 800, 4), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := Assess(tc.img, th)
			if !slices.Equal(rep.Problems, tc.want) {
				t.Fatalf("problems %v, want %v (mean %.1f, glare %.3f, sharpness %.1f)", rep.Problems, tc.want, rep.MeanLuma, rep.GlareShare, rep.Sharpness)
			}
		})
	}
}

// TestAssessGlare: a sharp, normally lit image with a bright patch over a
// fifth of it has glare, not overexposure.
func TestAssessGlare(t *testing.T) {
	t.Parallel()
	img := noise(800, 600, 5)
	for y := 0; y < 300; y++ {
		for x := 0; x < 400; x++ {
			img.Set(x, y, color.White)
		}
	}
	rep := Assess(img, DefaultThresholds())
	if !slices.Equal(rep.Problems, []string{Glare}) {
		t.Fatalf("problems %v (mean %.1f, glare %.3f)", rep.Problems, rep.MeanLuma, rep.GlareShare)
	}
}

// TestThresholdsOff: zero thresholds turn their checks off.
func TestThresholdsOff(t *testing.T) {
	t.Parallel()
	if rep := Assess(flat(10, 10, 128), Thresholds{}); !rep.OK() {
		t.Fatalf("problems %v with every check off", rep.Problems)
	}
}
