//go:build race

package hugeheap

// raceDetector: under -race every heap write also touches the detector's shadow memory,
// small pages outside the heap, so counting faults says nothing about the heap's pages.
const raceDetector = true
