// Package imagequality judges whether a photo of a document or a face is
// good enough to be read, on the decoded image, the way verification
// vendors warn an applicant before they submit: too small, too dark,
// overexposed, glare, blurry. It only measures; whether a problem refuses
// the upload is the caller's choice (complybox warns and lets the
// applicant retake or go on). It never decodes: an upload is decoded under
// the checks and within the decode budget of every upload, by
// store.AssessImage. A leaf package: the standard library only.
package imagequality

import (
	"image"
)

// Problems an image can have, as codes (the hosted UI words them).
const (
	TooSmall    = "too_small"   // fewer pixels than MinLongSide × MinShortSide
	TooDark     = "too_dark"    // mean luminance under DarkMean
	Overexposed = "overexposed" // mean luminance over BrightMean
	Glare       = "glare"       // more than GlareShare of the pixels near white
	Blurry      = "blurry"      // variance of the Laplacian under BlurVariance
)

// Thresholds are the limits of the checks ([kyc.quality] in the
// configuration). Luminance is 0–255 (Rec. 601 luma); the Laplacian is
// taken on the grey image scaled to at most SampleSide pixels on its long
// side, so the blur threshold does not depend on the camera's resolution.
type Thresholds struct {
	MinLongSide  int     // pixels; 0 turns the check off
	MinShortSide int     // pixels
	DarkMean     float64 // mean luma under it: too dark
	BrightMean   float64 // mean luma over it: overexposed
	GlareLevel   float64 // a pixel's luma at or over it counts as glare
	GlareShare   float64 // the share of glare pixels over which: glare (0..1)
	BlurVariance float64 // variance of the Laplacian under it: blurry; 0 turns the check off
}

// SampleSide is the long side of the grey image the checks measure.
const SampleSide = 512

// DefaultThresholds are complybox's defaults: a phone photo of an ID card
// in daylight passes, a thumbnail, a photo in the dark, into a lamp or
// moved while taken does not.
func DefaultThresholds() Thresholds {
	return Thresholds{MinLongSide: 640, MinShortSide: 400, DarkMean: 50, BrightMean: 215, GlareLevel: 250, GlareShare: 0.15, BlurVariance: 60}
}

// Report is what Assess measured and the problems it found, in the order
// of the constants above (none: the image is fine).
type Report struct {
	Width, Height int
	MeanLuma      float64 // 0..255
	GlareShare    float64 // 0..1
	Sharpness     float64 // variance of the Laplacian
	Problems      []string
}

// OK reports whether no problem was found.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Assess measures img against th.
func Assess(img image.Image, th Thresholds) Report {
	b := img.Bounds()
	rep := Report{Width: b.Dx(), Height: b.Dy()}
	if rep.Width == 0 || rep.Height == 0 {
		rep.Problems = []string{TooSmall}
		return rep
	}
	grey, w, h := sample(img)
	var sum float64
	glare := 0
	for _, v := range grey {
		sum += v
		if v >= th.GlareLevel {
			glare++
		}
	}
	rep.MeanLuma = sum / float64(len(grey))
	rep.GlareShare = float64(glare) / float64(len(grey))
	rep.Sharpness = laplacianVariance(grey, w, h)

	long, short := rep.Width, rep.Height
	if short > long {
		long, short = short, long
	}
	if th.MinLongSide > 0 && (long < th.MinLongSide || short < th.MinShortSide) {
		rep.Problems = append(rep.Problems, TooSmall)
	}
	if rep.MeanLuma < th.DarkMean {
		rep.Problems = append(rep.Problems, TooDark)
	}
	if th.BrightMean > 0 && rep.MeanLuma > th.BrightMean {
		rep.Problems = append(rep.Problems, Overexposed)
	}
	if th.GlareShare > 0 && rep.GlareShare > th.GlareShare {
		rep.Problems = append(rep.Problems, Glare)
	}
	if th.BlurVariance > 0 && rep.Sharpness < th.BlurVariance {
		rep.Problems = append(rep.Problems, Blurry)
	}
	return rep
}

// sample returns img as grey luma values (0..255), scaled down by box
// averaging to at most SampleSide on the long side, row by row.
func sample(img image.Image) ([]float64, int, int) {
	b := img.Bounds()
	step := 1
	for (b.Dx()+step-1)/step > SampleSide || (b.Dy()+step-1)/step > SampleSide {
		step++
	}
	w, h := (b.Dx()+step-1)/step, (b.Dy()+step-1)/step
	out := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var s float64
			n := 0
			for dy := 0; dy < step; dy++ {
				py := b.Min.Y + y*step + dy
				if py >= b.Max.Y {
					break
				}
				for dx := 0; dx < step; dx++ {
					px := b.Min.X + x*step + dx
					if px >= b.Max.X {
						break
					}
					r, g, bl, _ := img.At(px, py).RGBA()
					s += (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
					n++
				}
			}
			out[y*w+x] = s / float64(n)
		}
	}
	return out, w, h
}

// laplacianVariance is the variance of the 4-neighbour Laplacian over the
// inner pixels: near 0 for a flat or blurred image, large for sharp
// edges and texture.
func laplacianVariance(g []float64, w, h int) float64 {
	if w < 3 || h < 3 {
		return 0
	}
	var sum, sq float64
	n := 0
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			i := y*w + x
			l := g[i-w] + g[i+w] + g[i-1] + g[i+1] - 4*g[i]
			sum += l
			sq += l * l
			n++
		}
	}
	mean := sum / float64(n)
	return sq/float64(n) - mean*mean
}
