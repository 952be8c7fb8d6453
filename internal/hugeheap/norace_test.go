//go:build !race

package hugeheap

const raceDetector = false
