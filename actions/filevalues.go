package actions

// The values of a written file as writing and grading both read them:
// JSON as encoding/json gives it back, a learner's numbers as plain ints and
// floats, key=value lines, and the short forms messages quote. Nothing here
// calls the write action or its grading: both call here.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/labrun/labrun/internal/lang/eval"
	"github.com/labrun/labrun/internal/lang/keypath"
)

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}

// plainNumbers copies a decoded document with its json.Numbers as int
// (when integral and in range) or float64, as expressions compare numbers;
// the comparison keeps reading the json.Numbers of the original.
func plainNumbers(x any) any {
	switch v := x.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n)
		}
		f, _ := v.Float64()
		return f
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = plainNumbers(v[i])
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k := range v {
			out[k] = plainNumbers(v[k])
		}
		return out
	}
	return x
}

func parseKV(s string) map[string]string {
	out := map[string]string{}
	for _, line := range eval.Lines(s) {
		k, v, ok := strings.Cut(line, "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

func jsonRoundTrip(x any) any {
	b, err := json.Marshal(x)
	if err != nil {
		return x
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if dec.Decode(&out) != nil {
		return x
	}
	return out
}

func jsonKind(x any) string {
	switch x.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return reflect.TypeOf(x).String()
}

// sameJSON compares JSON values; lists of scalars compare as multisets,
// because the order in which a learner lists backends carries no meaning.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		fx, _ := strconv.ParseFloat(x.String(), 64)
		fy, _ := strconv.ParseFloat(y.String(), 64)
		return fx == fy
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		used := make([]bool, len(y))
	outer:
		for _, xe := range x {
			for j, ye := range y {
				if !used[j] && sameJSON(xe, ye) {
					used[j] = true
					continue outer
				}
			}
			return false
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			if yv, ok := y[k]; !ok || !sameJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func short(x any) string {
	b, _ := json.Marshal(x)
	return clip(string(b))
}

// clip cuts s to maxQuote bytes, on a rune boundary, marking the cut.
func clip(s string) string {
	if len(s) <= maxQuote {
		return s
	}
	cut := maxQuote - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// show names the value at p in a message ("the file" for the whole file).
func show(p keypath.Path) string {
	if len(p) == 0 {
		return "the file"
	}
	return p.String()
}
