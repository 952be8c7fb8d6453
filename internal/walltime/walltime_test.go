package walltime

import "testing"

func TestStrip(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"a": 1, "wall_time_ms": 12.5, "b": [{"wall_time_ms": 3, "c": 2}]}`, `{"a":1,"b":[{"c":2}]}`},
		{"{\"k\":1,\"wall_time_ms\":9}\n{\"k\":2,\"wall_time_ms\":8}\n", "{\"k\":1}\n{\"k\":2}"},
		{"{\n  \"wall_time_ms\": 4,\n  \"x\": \"y\"\n}\n", `{"x":"y"}`},
	} {
		got, err := Strip([]byte(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("Strip(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := Strip([]byte("{\"a\":1}\n{oops")); err == nil {
		t.Error("a broken line must be an error")
	}
}
