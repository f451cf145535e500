package yamlnode

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// What a YAML document may say that labrun would not take as written:
// tags whose meaning labrun drops, and numbers its values cannot hold.
// yaml.v3 keeps both in the node (the tag, the text), and labrun reads a
// node by its tag and its text alone, so without these checks a
// `!!binary aGVsbG8=` would be the string "aGVsbG8=", `!Ref x` the string
// "x", and `1e400` the string "1e400".

// Problem is a node labrun would not take as written, and why.
type Problem struct {
	Node *yaml.Node
	Msg  string
}

// KeptTags are the tags a document may write: the standard tags of the
// kinds labrun's values have. A value written with one means what it
// means without it, as long as it fits (!!str 12 is the text "12").
var KeptTags = []string{"!!str", "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq"}

// Tags returns the problems of the tags in the document under n, in
// document order: a tag labrun does not keep (!!binary, !!timestamp,
// !!set, !Ref, ...), a kept tag the value does not fit (!!int abc, !!map
// on a list, !!float 1e400) and a merge key (<<), which yaml.v3 leaves as
// a key named "<<". Aliases are not followed.
func Tags(n *yaml.Node) []Problem {
	var out []Problem
	walkTags(n, &out)
	return out
}

func walkTags(n *yaml.Node, out *[]Problem) {
	if n == nil || n.Kind == yaml.AliasNode {
		return
	}
	if msg := tagProblem(n); msg != "" {
		*out = append(*out, Problem{n, msg})
	}
	for _, c := range n.Content {
		walkTags(c, out)
	}
}

// tagProblem says what is wrong with n's own tag, "" when nothing is.
func tagProblem(n *yaml.Node) string {
	if n.Kind == yaml.DocumentNode {
		return ""
	}
	if n.Tag == "!!merge" {
		return `YAML merge keys (<<) are not supported: labrun would read << as a key of its own; write the keys out, or quote "<<" for a key of that name`
	}
	if n.Style&yaml.TaggedStyle == 0 {
		return "" // the tag YAML resolved from the text: it means what it says
	}
	kept := false
	for _, t := range KeptTags {
		kept = kept || n.Tag == t
	}
	if !kept {
		return fmt.Sprintf("YAML tag %s is not supported: labrun would drop it and read the value as written; remove it (the tags labrun keeps: %s)", n.Tag, strings.Join(KeptTags, ", "))
	}
	kind := map[string]yaml.Kind{"!!map": yaml.MappingNode, "!!seq": yaml.SequenceNode}[n.Tag]
	if kind == 0 {
		kind = yaml.ScalarNode
	}
	if n.Kind != kind {
		return fmt.Sprintf("YAML tag %s does not fit %s: expected %s", n.Tag, Describe(n), map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list", yaml.ScalarNode: "a single value"}[kind])
	}
	v := n.Value
	switch n.Tag {
	case "!!int":
		if _, err := strconv.ParseInt(v, 0, 64); errors.Is(err, strconv.ErrRange) {
			return outOfRange(v)
		} else if err != nil {
			return fmt.Sprintf("YAML tag !!int does not fit %q: expected a whole number", v)
		}
	case "!!float":
		f, err := strconv.ParseFloat(v, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return outOfRange(v)
		case err != nil:
			return fmt.Sprintf("YAML tag !!float does not fit %q: expected a number", v)
		case math.IsInf(f, 0) || math.IsNaN(f):
			return noInfinity(v)
		}
	case "!!bool":
		switch v {
		case "true", "True", "TRUE", "false", "False", "FALSE":
		default:
			return fmt.Sprintf("YAML tag !!bool does not fit %q: expected true or false", v)
		}
	case "!!null":
		switch v {
		case "", "~", "null", "Null", "NULL":
		default:
			return fmt.Sprintf("YAML tag !!null does not fit %q: expected null, ~ or nothing", v)
		}
	}
	return ""
}

// Number says why labrun cannot hold the number a plain scalar is in
// YAML, "" when it can or the scalar is no number: out of range (1e400,
// 18446744073709551615, which yaml.v3 leaves as the text or a number
// labrun does not read), infinity or NaN (.inf: JSON has neither), or
// written in a way only YAML reads (1__0). Only a place where YAML's
// reading is the value (a variable, a json or compute value) must refuse
// these; a field that takes a string takes the text as written.
func Number(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.Style != 0 {
		return "" // quoted, tagged (Tags checks those) or not a scalar
	}
	v := n.Value
	switch n.Tag {
	case "!!int":
		if _, err := strconv.ParseInt(v, 0, 64); errors.Is(err, strconv.ErrRange) {
			return outOfRange(v)
		} else if err != nil {
			return fmt.Sprintf("YAML reads %s as a whole number, which labrun cannot read as written; write it with digits only, or quote it to keep the text", v)
		}
	case "!!float":
		switch strings.ToLower(strings.TrimLeft(v, "+-")) {
		case ".inf", ".nan":
			return noInfinity(v)
		}
		if _, err := strconv.ParseFloat(v, 64); err != nil {
			return fmt.Sprintf("YAML reads %s as a number, which labrun cannot read as written; write it with digits only, or quote it to keep the text", v)
		}
	case "!!str":
		// yaml.v3 leaves a number it cannot hold as text
		plain := strings.ReplaceAll(v, "_", "")
		if _, err := strconv.ParseFloat(plain, 64); errors.Is(err, strconv.ErrRange) && yamlFloat.MatchString(plain) {
			return outOfRange(v)
		}
		if _, err := strconv.ParseInt(plain, 0, 64); errors.Is(err, strconv.ErrRange) && prefixedInt.MatchString(plain) {
			return outOfRange(v)
		}
	}
	return ""
}

// yamlFloat is a number as yaml.v3 reads one (its yamlStyleFloat), and
// prefixedInt a whole number in base 16, 8 or 2.
var (
	yamlFloat   = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	prefixedInt = regexp.MustCompile(`^[-+]?0(x[0-9a-fA-F]+|o[0-7]+|b[01]+)$`)
)

func outOfRange(v string) string {
	return fmt.Sprintf("%s is out of range for a number: labrun holds whole numbers from %d to %d and decimals up to about 1.8e308; quote it to keep the text", v, math.MinInt64, math.MaxInt64)
}

func noInfinity(v string) string {
	return fmt.Sprintf("YAML reads %s as infinity or not-a-number, which labrun's numbers cannot hold (JSON has neither); quote it to keep the text", v)
}
