package eval

import "testing"

func TestPlainTypes(t *testing.T) {
	for in, want := range map[string]string{
		"invalid operation: == (mismatched types actions.RunResult and int)":    "invalid operation: == (mismatched types the result of a run step and int)",
		"invalid operation: + (mismatched types *actions.HTTPResult and int)":   "invalid operation: + (mismatched types the result of a http step and int)",
		`mismatched types struct { F0 string "expr:\"v\" json:\"v\"" } and int`: "mismatched types an object and int",
		`cannot use []struct { A struct { B int } } as string`:                  "cannot use a list of objects as string",
		"cannot use []parse.Conntrack as map[string]interface {}":               "cannot use a list of objects as a mapping",
		"type interface {} has no field x":                                      "type any value has no field x",
		"no Go type here: 1.5 and steps.a":                                      "no Go type here: 1.5 and steps.a",
	} {
		if got := PlainTypes(in); got != want {
			t.Errorf("PlainTypes(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}
