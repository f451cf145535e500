package schemacheck

import (
	"slices"
	"strconv"
	"strings"

	"github.com/labrun/labrun/internal/lang/diag"
)

// JSON Schema ignores keywords it does not know, so "requried" or
// "maxlength" would silently check nothing. Lab schemas are small and
// hand-written: a keyword that no draft labrun reads defines is refused
// with a suggestion, unless it starts with "x-" (an extension on purpose).

// keywords are the keywords of 2020-12 and draft-07, with the annotations
// editors read.
var keywords = []string{
	"$schema", "$id", "$ref", "$defs", "$anchor", "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$comment",
	"$recursiveRef", "$recursiveAnchor", "definitions",
	"type", "enum", "const",
	"multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum",
	"maxLength", "minLength", "pattern", "format",
	"maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "contains",
	"items", "prefixItems", "additionalItems", "unevaluatedItems",
	"maxProperties", "minProperties", "required", "dependentRequired", "dependencies",
	"properties", "patternProperties", "additionalProperties", "propertyNames", "unevaluatedProperties",
	"dependentSchemas", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"contentEncoding", "contentMediaType", "contentSchema",
	"title", "description", "default", "deprecated", "readOnly", "writeOnly", "examples",
	"markdownDescription",
	// the message editors show instead of their own (yaml-language-server, VS Code)
	"errorMessage", "patternErrorMessage",
}

// Where schemas sit inside a schema: as the value of a keyword, as the
// values of a keyword's mapping, or as the items of a keyword's list.
var (
	schemaValued = []string{"additionalProperties", "items", "additionalItems", "contains", "propertyNames",
		"not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaMaps  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaLists = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// checkKeywords reports the first unknown keyword, in document order.
func checkKeywords(file string, data []byte, doc any) error {
	var bad []string // pointers to unknown keywords
	walkSchema(doc, "", &bad)
	if len(bad) == 0 {
		return nil
	}
	at := offsets(data)
	slices.SortFunc(bad, func(a, b string) int { return at[a] - at[b] })
	ptr := bad[0]
	word := unescape(ptr[strings.LastIndexByte(ptr, '/')+1:])
	return diag.Errorf(pointerPos(file, data, ptr), "unknown JSON Schema keyword %q%s; JSON Schema would ignore it and check nothing (an extension's name starts with x-)", word, diag.DidYouMean(word, keywords))
}

func walkSchema(v any, path string, bad *[]string) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for _, k := range sortedKeys(m) {
		p := path + "/" + escape(k)
		switch {
		case strings.HasPrefix(k, "x-"):
		case !slices.Contains(keywords, k):
			*bad = append(*bad, p)
		case k == "enum" || k == "const" || k == "default" || k == "examples":
			// values, not schemas
		case slices.Contains(schemaMaps, k):
			if sub, ok := m[k].(map[string]any); ok {
				for _, name := range sortedKeys(sub) {
					walkSchema(sub[name], p+"/"+escape(name), bad)
				}
			}
		case slices.Contains(schemaLists, k) && isList(m[k]):
			for i, sub := range m[k].([]any) {
				walkSchema(sub, p+"/"+strconv.Itoa(i), bad)
			}
		case slices.Contains(schemaValued, k):
			walkSchema(m[k], p, bad)
		}
	}
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

func unescape(token string) string { return pointerUnescaper.Replace(token) }

var pointerUnescaper = strings.NewReplacer("~1", "/", "~0", "~")
