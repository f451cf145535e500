package report

import (
	"bytes"
	"encoding/json"
)

// A check's JSON report is mostly its steps' results (cca-datapath's,
// 2.4 MB, nearly all the agent's conntrack table and documents), which
// the report's schema takes as any object or array and check
// --rerun-failed never reads. Decoding them into a tree to validate it
// took longer than re-checking a task, so the report is read in two
// steps: encoding/json checks the whole text is JSON (one fast scan),
// then skim copies it with each step's result replaced by an empty value
// of its kind, and that copy is decoded and validated. The JSON pointers
// of what is left are those of the file, so problems are placed in it.

// skim returns data, which must be valid JSON, with the value of every
// member "result" of an object in the array "steps" of the top-level
// object replaced by {} or [] as it was an object or an array (any other
// value is kept, for the schema to refuse).
func skim(data []byte) []byte {
	var out bytes.Buffer
	out.Grow(64 << 10)
	last := 0
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return data
	}
	forMembers(data, i, func(key string, v int) int {
		end := skipValue(data, v)
		if key != "steps" || data[v] != '[' {
			return end
		}
		forItems(data, v, func(item int) int {
			end := skipValue(data, item)
			if data[item] != '{' {
				return end
			}
			forMembers(data, item, func(key string, r int) int {
				end := skipValue(data, r)
				if key == "result" && (data[r] == '{' || data[r] == '[') {
					out.Write(data[last:r])
					out.WriteString(map[byte]string{'{': "{}", '[': "[]"}[data[r]])
					last = end
				}
				return end
			})
			return end
		})
		return end
	})
	out.Write(data[last:])
	return out.Bytes()
}

// forMembers calls f with each member's key and the offset of its value,
// in the object at data[i]; f returns the offset after the value.
func forMembers(data []byte, i int, f func(key string, value int) int) {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] == '"' {
		end := stringEnd(data, i)
		var key string
		if json.Unmarshal(data[i:end], &key) != nil {
			return
		}
		i = skipSpace(data, end)
		i = skipSpace(data, i+1) // the colon
		i = skipSpace(data, f(key, i))
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
}

// forItems calls f with the offset of each item of the array at data[i];
// f returns the offset after the item.
func forItems(data []byte, i int, f func(item int) int) {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != ']' {
		i = skipSpace(data, f(i))
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
}

// skipValue returns the offset just after the value at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return stringEnd(data, i)
	case '{', '[':
		depth := 0
		for ; i < len(data); i++ {
			switch data[i] {
			case '"':
				i = stringEnd(data, i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	for i < len(data) && bytes.IndexByte([]byte(",}] \t\r\n"), data[i]) < 0 {
		i++
	}
	return i
}

// stringEnd returns the offset just after the string that starts at
// data[i] (its opening quote).
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}
