package kubeschema

import (
	"slices"
	"strings"
)

// Convert turns an OpenAPI v3 schema of the Kubernetes API (a component
// of the API server's /openapi/v3 documents, or a CRD version's
// openAPIV3Schema) into the JSON Schema (draft-07) this package checks
// manifests with, keeping only what decides whether the API server can
// take a field at all:
//
//   - type, properties, items, additionalProperties and required;
//   - an object with properties refuses any other key (additionalProperties
//     false), as the API server's field validation does, unless it says
//     x-kubernetes-preserve-unknown-fields;
//   - an int-or-string (x-kubernetes-int-or-string, or a oneOf/anyOf of
//     bare types, as IntOrString and Quantity are written) becomes a list
//     of types;
//   - a reference "#/components/schemas/NAME" becomes "NAME": each
//     definition is a schema resource of its own, which the library
//     reads (and checks against the JSON Schema metaschema) only when a
//     kind being checked reaches it; the allOf that wraps a reference
//     beside a description is unwrapped.
//
// Descriptions, defaults, formats, enums, patterns and bounds are left
// out: they are the server's validation of values, which a value computed
// at run time (an expression) could not be checked against at validate,
// and most of the embedded data's size.
func Convert(s map[string]any) map[string]any {
	out := map[string]any{}
	if ref, ok := s["$ref"].(string); ok {
		out["$ref"] = defRef(ref)
		return out
	}
	if all, ok := s["allOf"].([]any); ok && len(all) == 1 {
		if one, ok := all[0].(map[string]any); ok {
			if ref, ok := one["$ref"].(string); ok {
				out["$ref"] = defRef(ref)
				return out
			}
		}
	}
	preserve := s["x-kubernetes-preserve-unknown-fields"] == true
	if s["x-kubernetes-int-or-string"] == true {
		out["type"] = []any{"integer", "string"}
		return out
	}
	if ts := alternativeTypes(s); len(ts) > 0 {
		out["type"] = ts
		return out
	}
	if t, ok := s["type"].(string); ok && t != "" {
		out["type"] = t
	}
	if props, ok := s["properties"].(map[string]any); ok && len(props) > 0 {
		cp := make(map[string]any, len(props))
		for k, v := range props {
			if m, ok := v.(map[string]any); ok {
				cp[k] = Convert(m)
			}
		}
		out["properties"] = cp
		if _, set := s["additionalProperties"]; !set && !preserve {
			out["additionalProperties"] = false
		}
	}
	switch ap := s["additionalProperties"].(type) {
	case bool:
		if !ap && !preserve {
			out["additionalProperties"] = false
		}
	case map[string]any:
		if !preserve {
			out["additionalProperties"] = Convert(ap)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out["items"] = Convert(items)
	}
	if req, ok := s["required"].([]any); ok && len(req) > 0 {
		out["required"] = slices.Clone(req)
	}
	return out
}

// defRef maps an OpenAPI v3 component reference to the definition's
// name, which is its URL relative to any other definition's.
func defRef(ref string) string {
	return strings.TrimPrefix(ref, "#/components/schemas/")
}

// alternativeTypes reads a oneOf or anyOf whose forms are bare types
// ({type: integer}, {type: string}) as the list of those types; nil for
// any other form (a CRD's oneOf of required keys, which only the server's
// validation of values decides).
func alternativeTypes(s map[string]any) []any {
	for _, key := range []string{"oneOf", "anyOf"} {
		forms, ok := s[key].([]any)
		if !ok || len(forms) == 0 {
			continue
		}
		var ts []any
		for _, f := range forms {
			m, ok := f.(map[string]any)
			if !ok || len(m) != 1 {
				return nil
			}
			t, ok := m["type"].(string)
			if !ok {
				return nil
			}
			ts = append(ts, t)
		}
		return ts
	}
	return nil
}
