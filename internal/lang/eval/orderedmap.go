package eval

import (
	"bytes"
	"encoding/json"
)

// Map is a mapping that keeps its keys in the order they were written, so
// that rendered JSON files list keys as the lab asks.
type Map struct {
	Keys   []string
	Values map[string]any
}

// NewMap returns an empty ordered map.
func NewMap() *Map { return &Map{Values: map[string]any{}} }

// Set adds or replaces a key, keeping first-insertion order.
func (m *Map) Set(k string, v any) {
	if _, ok := m.Values[k]; !ok {
		m.Keys = append(m.Keys, k)
	}
	m.Values[k] = v
}

// MarshalJSON writes the keys in order.
func (m *Map) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range m.Keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(m.Values[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Plain converts *Map values (recursively) to map[string]any, the form
// expressions can index.
func Plain(x any) any {
	switch v := x.(type) {
	case *Map:
		out := make(map[string]any, len(v.Keys))
		for _, k := range v.Keys {
			out[k] = Plain(v.Values[k])
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = Plain(e)
		}
		return out
	}
	return x
}
