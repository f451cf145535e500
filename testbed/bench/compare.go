package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// labFiles are the files the lab asks for.
var labFiles = []string{"iptables.json", "svc.json", "scale.json", "ct.json", "prog.json", "nodeport.json", "ghost.json", "report.txt"}

// perRun are the keys whose values differ between any two runs by design;
// they are compared by type (and, for lists, length and element types):
// curl's time, and the addresses of the two pods each run's scale-up
// creates (checkScale checks those against the cluster).
var perRun = map[string]bool{
	"ghost.json seconds":      true,
	"scale.json backends":     true,
	"scale.json new_backends": true,
}

// compareLabDirs compares the cca-datapath lab files of labrun's output
// directory a with the bash solution's b, key by key, and returns the
// differences.
func compareLabDirs(a, b string) ([]string, error) {
	return compareFiles(labFiles, perRun, a, b)
}

// compareFiles compares files of directory a with b's, key by key, the
// keys of perRun ("file key") by type only, and returns the differences.
func compareFiles(files []string, perRun map[string]bool, a, b string) ([]string, error) {
	var diffs []string
	for _, f := range files {
		read := readJSONObject
		if strings.HasSuffix(f, ".txt") {
			read = readKV
		}
		ka, va, err := read(filepath.Join(a, f))
		if err != nil {
			return nil, fmt.Errorf("labrun's %s: %v", f, err)
		}
		kb, vb, err := read(filepath.Join(b, f))
		if err != nil {
			return nil, fmt.Errorf("the bash solution's %s: %v", f, err)
		}
		if !reflect.DeepEqual(ka, kb) {
			diffs = append(diffs, fmt.Sprintf("%s: keys %v, bash has %v", f, ka, kb))
			continue
		}
		for _, k := range ka {
			x, y := va[k], vb[k]
			if tx, ty := typeOf(x), typeOf(y); tx != ty {
				diffs = append(diffs, fmt.Sprintf("%s %s: labrun has %s %v, bash has %s %v", f, k, tx, x, ty, y))
				continue
			}
			if perRun[f+" "+k] {
				continue
			}
			if !reflect.DeepEqual(x, y) {
				diffs = append(diffs, fmt.Sprintf("%s %s: labrun has %v, bash has %v", f, k, show(x), show(y)))
			}
		}
	}
	return diffs, nil
}

// readJSONObject reads a JSON object's keys in file order and its values
// (numbers as float64, so 2 and 2.0 compare equal; their type is "number").
func readJSONObject(path string) ([]string, map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	var keys []string
	vals := map[string]any{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k := t.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if _, dup := vals[k]; dup {
			return nil, nil, fmt.Errorf("key %q twice", k)
		}
		keys = append(keys, k)
		vals[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("data after the object")
	}
	return keys, vals, nil
}

// readKV reads key=value lines in order.
func readKV(path string) ([]string, map[string]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	vals := map[string]any{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			return nil, nil, fmt.Errorf("line %q is not key=value", sc.Text())
		}
		keys = append(keys, k)
		vals[k] = v
	}
	return keys, vals, sc.Err()
}

// typeOf names a decoded JSON value's type; a list's includes its length
// and its elements' types, so lists of different shapes differ.
func typeOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		var el []string
		for _, e := range v {
			el = append(el, typeOf(e))
		}
		return fmt.Sprintf("list of %d [%s]", len(v), strings.Join(el, " "))
	}
	return fmt.Sprintf("%T", v)
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
