package config

import (
	"math"
	"slices"
	"strings"
)

// routerKey is one search_space key of a block of router knobs modelled on a Dynamo config
// (loadkeys.go, routerindex.go): a list like every search_space key, Dynamo's default (in
// canonical text: a key at it is left out of the fingerprint, so experiments from before the
// key existed keep theirs), whether only the kv_router mode reads it (a sweep leaves it out
// of other modes' configurations), and the check of one value.
type routerKey struct {
	key    string
	def    string
	kvOnly bool
	check  func(c valueCheck) error
}

// routerKeyBlock is a block of router keys, in the order their dimensions are reported.
type routerKeyBlock []routerKey

func (b routerKeyBlock) names() []string {
	ks := make([]string, len(b))
	for i, k := range b {
		ks[i] = k.key
	}
	return ks
}

func (b routerKeyBlock) kvOnlyNames() []string {
	var ks []string
	for _, k := range b {
		if k.kvOnly {
			ks = append(ks, k.key)
		}
	}
	return ks
}

func (b routerKeyBlock) lookup(key string) (routerKey, bool) {
	i := slices.IndexFunc(b, func(k routerKey) bool { return k.key == key })
	if i < 0 {
		return routerKey{}, false
	}
	return b[i], true
}

// routerKeyBlocks are every block, each key's default and check found by routerKeyOf.
func routerKeyBlocks() []routerKeyBlock { return []routerKeyBlock{loadBlock, indexBlock} }

// routerKeyOf finds key in the router key blocks.
func routerKeyOf(key string) (routerKey, bool) {
	for _, b := range routerKeyBlocks() {
		if k, ok := b.lookup(key); ok {
			return k, true
		}
	}
	return routerKey{}, false
}

// routerDefaults are every router key's default, by key.
func routerDefaults() map[string]string {
	m := map[string]string{}
	for _, b := range routerKeyBlocks() {
		for _, k := range b {
			m[k.key] = k.def
		}
	}
	return m
}

// atRouterDefault reports whether key is a router key whose canonical value (a list's text)
// is Dynamo's default, which the fingerprint leaves out.
func atRouterDefault(key, value string) bool {
	k, ok := routerKeyOf(key)
	return ok && k.def == value
}

// valueCheck checks one value of a list-valued search_space key; fail words the error at the
// value's place (file, line, key).
type valueCheck struct {
	v    Value
	fail func(format string, a ...any) error
}

// oneOf accepts only the texts allowed.
func (c valueCheck) oneOf(allowed ...string) error {
	if slices.Contains(allowed, c.v.Text) {
		return nil
	}
	return c.fail("unsupported value %q (want one of %s)", c.v.Text, strings.Join(allowed, ", "))
}

// numIn accepts a number in [lo, hi], an integer if asked.
func (c valueCheck) numIn(lo, hi float64, integer bool) error {
	if c.inRange(lo, hi, integer) {
		return nil
	}
	return c.fail("value %q out of range: want %s in [%g, %g]", c.v.Text, numberKind(integer), lo, hi)
}

// noneOrNumIn accepts "none" (a threshold that is not set) or a number in [lo, hi].
func (c valueCheck) noneOrNumIn(lo, hi float64, integer bool) error {
	if c.v.Text == unset || c.inRange(lo, hi, integer) {
		return nil
	}
	return c.fail("value %q out of range: want none or %s in [%g, %g]", c.v.Text, numberKind(integer), lo, hi)
}

func (c valueCheck) inRange(lo, hi float64, integer bool) bool {
	return c.v.IsNum && c.v.Num >= lo && c.v.Num <= hi && (!integer || c.v.Num == math.Trunc(c.v.Num))
}

func numberKind(integer bool) string {
	if integer {
		return "an integer"
	}
	return "a number"
}

// boolKey, numKey and noneOrNumKey are the checks most router keys take.
func boolKey(c valueCheck) error { return c.oneOf("true", "false") }

func numKey(lo, hi float64, integer bool) func(valueCheck) error {
	return func(c valueCheck) error { return c.numIn(lo, hi, integer) }
}

func noneOrNumKey(lo, hi float64, integer bool) func(valueCheck) error {
	return func(c valueCheck) error { return c.noneOrNumIn(lo, hi, integer) }
}
