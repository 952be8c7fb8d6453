package report

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks labels a linear axis at multiples of 1, 2 or 5 × 10^k, about five labels, each
// with just the decimals its step needs: every chart of a report labels alike ("250", "750",
// not "250.00" beside another chart's "200").
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	step := niceStep(lo, hi)
	decimals := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ticks []plot.Tick
	first := math.Ceil(lo/step-1e-9) * step
	for i := 0; ; i++ {
		v := first + float64(i)*step
		if v > hi+step*1e-9 {
			break
		}
		if math.Abs(v) < step*1e-9 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', decimals, 64)})
		// Unlabelled minor ticks halfway.
		if m := v + step/2; m <= hi {
			ticks = append(ticks, plot.Tick{Value: m})
		}
	}
	if m := first - step/2; m >= lo {
		ticks = append(ticks, plot.Tick{Value: m})
	}
	return ticks
}

// niceStep is the step of 1, 2 or 5 × 10^k that puts closest to six labels on [lo, hi]
// (the smaller step on a tie).
func niceStep(lo, hi float64) float64 {
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	best, bestOff := 0.0, math.Inf(1)
	for _, k := range []float64{1, 2, 5, 10, 20} {
		step := k * mag
		n := math.Floor(hi/step+1e-9) - math.Ceil(lo/step-1e-9) + 1
		if off := math.Abs(n - 6); off < bestOff {
			best, bestOff = step, off
		}
	}
	return best
}
