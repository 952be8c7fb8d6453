package trace

import "fmt"

// Builtin returns the named built-in trace ("toolagent" or "conversation").
func Builtin(profile string) (*Trace, error) {
	return nil, fmt.Errorf("%s%s: built-in traces are not available yet", BuiltinPrefix, profile)
}
