package config

import "slices"

// Clone returns a copy of f that Set can change without changing f (the explorer sweeps a
// copy fixed at the knobs it shows).
func (f *File) Clone() *File {
	g := *f
	g.lists = slices.Clone(f.lists) // Set replaces a list's slices, never writes into them
	return &g
}
