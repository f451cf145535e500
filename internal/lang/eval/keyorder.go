package eval

import (
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// Key order of maps an expression makes. expr-lang's map literals are Go
// maps, so {"zeta": 1, "alpha": 2} would be written sorted. Every map
// literal of the playbook with constant keys records its order here, and a
// map an expression gives to a field of no declared type (write's json and
// kv) takes the order of the literal with exactly its keys, nested maps
// included: a map made by a literal, kept by compute or built per item by
// map() is written in the order its keys were written. Maps no literal
// made (fromJSON, a Kubernetes object) keep encoding/json's sorted order,
// and so does a key set two literals write in different orders.

// recordKeyOrders notes the key order of each map literal in n.
func (c *Compiler) recordKeyOrders(n ast.Node) {
	ast.Find(n, func(m ast.Node) bool {
		mn, ok := m.(*ast.MapNode)
		if !ok || len(mn.Pairs) < 2 {
			return false
		}
		keys := make([]string, 0, len(mn.Pairs))
		for _, p := range mn.Pairs {
			pair, ok := p.(*ast.PairNode)
			if !ok {
				return false
			}
			s, ok := pair.Key.(*ast.StringNode)
			if !ok {
				return false
			}
			keys = append(keys, s.Value)
		}
		set := keySet(keys)
		if old, loaded := c.keyOrders.LoadOrStore(set, keys); loaded {
			if prev, _ := old.([]string); prev != nil && !slices.Equal(prev, keys) {
				c.keyOrders.Store(set, []string(nil)) // two orders: neither
			}
		}
		return false
	})
}

func keySet(keys []string) string {
	s := slices.Clone(keys)
	slices.Sort(s)
	return strings.Join(s, "\x00")
}

// ordered returns x with every map whose key set a literal wrote turned
// into a *Map in that literal's order, recursively.
func (c *Compiler) ordered(x any) any {
	switch v := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		order, _ := c.keyOrders.Load(keySet(keys))
		o, _ := order.([]string)
		if o == nil {
			slices.Sort(keys)
			o = keys
		}
		m := NewMap()
		for _, k := range o {
			m.Set(k, c.ordered(v[k]))
		}
		return m
	case *Map:
		m := NewMap()
		for _, k := range v.Keys {
			m.Set(k, c.ordered(v.Values[k]))
		}
		return m
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = c.ordered(e)
		}
		return out
	}
	return x
}

// compiler finds the compiler of an expression in v, nil when v holds no
// expression (a literal's mappings are in order already).
func (v *Value) compiler() *Compiler {
	if v == nil {
		return nil
	}
	if v.expr != nil {
		return v.expr.compiler
	}
	for _, p := range v.parts {
		if p.expr != nil {
			return p.expr.compiler
		}
	}
	for _, c := range append(slices.Clone(v.items), v.vals...) {
		if cc := c.compiler(); cc != nil {
			return cc
		}
	}
	return nil
}
