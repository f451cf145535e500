package parse

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestCutAnywhere is the property every parser keeps on every capture
// under testdata: the output cut at any byte either parses to the records
// complete before the cut, or fails with an error marked Truncated; it
// never yields a value that is not in the full output. "Complete before
// the cut" is checked structurally on the JSON of the results: a list of
// the cut result is a prefix of the full one whose last element may itself
// be cut (a service whose later backend lines were cut off), a map holds a
// subset of the full map's keys, and a scalar equals the full value or is
// absent (null, "" or false). A number that differs, a 0 where the full
// output printed 7, is a made-up value and fails the test.
func TestCutAnywhere(t *testing.T) {
	forEachCapture(t, func(t *testing.T, p Parser, body, full string) {
		var fullJSON any
		if err := json.Unmarshal([]byte(full), &fullJSON); err != nil {
			t.Fatal(err)
		}
		for _, i := range cutPoints(body) {
			cut := body[:i]
			if p.Kind == kindCurl && i > 0 && body[i-1] != '\n' {
				// curl prints its -w text with no newline of its own
				// unless the format has one, so a value cut short
				// ("200 0.0017" of "200 0.001764") looks whole: only
				// cuts between lines are checked (docs/language.md says so).
				continue
			}
			v, err := p.Parse(cut)
			if err != nil {
				var pe *Error
				if !asError(err, &pe) {
					t.Fatalf("cut at byte %d: error %v is not a *parse.Error", i, err)
				}
				// An error about no line (Line 0: "empty input", "no
				// Key : value line found") says nothing was read.
				if !pe.Truncated && pe.Line > 0 && !noRecordYet(cut) {
					t.Fatalf("cut at byte %d (%q): error not marked Truncated: %v", i, tail(cut), err)
				}
				continue
			}
			if why := prefixOf(toJSONValue(t, v), fullJSON, ""); why != "" {
				t.Fatalf("cut at byte %d (%q): %s", i, tail(cut), why)
			}
		}
	})
}

// cutPoints is every byte of a small input; for a large one every byte of
// its first and last 2 KB and a stride through the middle, so that the
// test stays fast on 100 KB captures.
func cutPoints(s string) []int {
	var out []int
	for i := 0; i <= len(s); i++ {
		if len(s) <= 8192 || i < 2048 || i > len(s)-2048 || i%61 == 0 || i > 0 && s[i-1] == '\n' {
			out = append(out, i)
		}
	}
	return out
}

// noRecordYet reports whether a cut leaves no complete non-blank line: a
// parser may then refuse the input as empty or as lacking its header.
func noRecordYet(cut string) bool {
	return strings.TrimSpace(cut[:strings.LastIndexByte(cut, '\n')+1]) == ""
}

func tail(s string) string {
	if len(s) > 60 {
		return "..." + s[len(s)-60:]
	}
	return s
}

func toJSONValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// prefixOf returns "" when cut is a prefix of full as described for
// TestCutAnywhere, else what differs and where.
func prefixOf(cut, full any, path string) string {
	switch c := cut.(type) {
	case []any:
		f, ok := full.([]any)
		if !ok {
			return path + ": list where the full output has " + fmt.Sprint(full)
		}
		if len(c) > len(f) {
			return fmt.Sprintf("%s: %d elements, the full output has %d", path, len(c), len(f))
		}
		for i := range c {
			if i < len(c)-1 {
				if b1, b2 := mustJSON(c[i]), mustJSON(f[i]); b1 != b2 {
					return fmt.Sprintf("%s[%d]: %s, the full output has %s", path, i, b1, b2)
				}
				continue
			}
			if why := prefixOf(c[i], f[i], fmt.Sprintf("%s[%d]", path, i)); why != "" {
				return why
			}
		}
		return ""
	case map[string]any:
		f, ok := full.(map[string]any)
		if !ok {
			return path + ": object where the full output has " + fmt.Sprint(full)
		}
		for k, v := range c {
			fv, ok := f[k]
			if !ok {
				return path + "." + k + ": not in the full output"
			}
			if k == "lines" || path == "" && k == "values" && c["readWrite"] != nil {
				// TCFilters.Lines counts the lines read so far, and
				// Config.Values takes a key's read-write value over its
				// read-only one, which a cut may not have reached yet
				// (ReadOnly and ReadWrite are still checked).
				continue
			}
			if why := prefixOf(v, fv, path+"."+k); why != "" {
				return why
			}
		}
		return ""
	case nil:
		return ""
	case string:
		if c == "" || c == full {
			return ""
		}
	case bool:
		if !c || c == full {
			return ""
		}
	default:
		if c == full {
			return ""
		}
	}
	return fmt.Sprintf("%s: %v, the full output has %v", path, mustJSON(cut), mustJSON(full))
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
