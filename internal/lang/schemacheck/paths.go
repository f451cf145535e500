package schemacheck

import (
	"github.com/labrun/labrun/internal/lang/keypath"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Declares reports whether the schema declares the value path p names: a
// key each object on the way lists in properties (or matches with
// patternProperties, or allows with an additionalProperties schema), and
// items for every [*]. Every branch of allOf, anyOf, oneOf, if/then/else
// and $ref counts: a path any of them declares can occur in a valid file.
// An object schema that declares no key at all and does not forbid others
// declares nothing, so a path through it is not declared.
func (s *Schema) Declares(p keypath.Path) bool {
	return declares(s.s, p, map[*jsonschema.Schema]bool{})
}

func declares(s *jsonschema.Schema, p keypath.Path, seen map[*jsonschema.Schema]bool) bool {
	if s == nil || seen[s] {
		return false
	}
	if len(p) == 0 {
		return true
	}
	seen[s] = true
	defer delete(seen, s)
	for _, sub := range []*jsonschema.Schema{s.Ref, s.If, s.Then, s.Else} {
		if declares(sub, p, seen) {
			return true
		}
	}
	for _, list := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for _, sub := range list {
			if declares(sub, p, seen) {
				return true
			}
		}
	}
	seg, rest := p[0], p[1:]
	if seg.Item {
		if declares(s.Items2020, rest, seen) {
			return true
		}
		for _, sub := range s.PrefixItems {
			if declares(sub, rest, seen) {
				return true
			}
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			return declares(it, rest, seen)
		case []*jsonschema.Schema:
			for _, sub := range it {
				if declares(sub, rest, seen) {
					return true
				}
			}
		}
		return false
	}
	if sub, ok := s.Properties[seg.Key]; ok {
		return declares(sub, rest, seen)
	}
	for re, sub := range s.PatternProperties {
		if re.MatchString(seg.Key) && declares(sub, rest, seen) {
			return true
		}
	}
	if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		return declares(ap, rest, seen)
	}
	return false
}
