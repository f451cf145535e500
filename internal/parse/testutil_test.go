package parse

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// input returns the body (header stripped) of testdata/<rel>.
func input(t testing.TB, rel string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	_, body := splitHeader(string(data))
	return body
}

// captureHeader returns the "# key: value" header of testdata/<rel>.
func captureHeader(t testing.TB, rel string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", rel))
	if err != nil {
		t.Fatal(err)
	}
	h, _ := splitHeader(string(data))
	return h
}

func eq[T any](t *testing.T, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}

// wantError checks that err is a *Error of parser kind at line whose
// message contains msg.
func wantError(t *testing.T, err error, kind string, line int, msg string) {
	t.Helper()
	var pe *Error
	if !asError(err, &pe) {
		t.Fatalf("error %v (%T) is not a *parse.Error", err, err)
	}
	if pe.Parser != kind || pe.Line != line || !contains(pe.Msg, msg) {
		t.Errorf("error = %q, want parser %s line %d message containing %q", err, kind, line, msg)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func itoa(i int) string { return strconv.Itoa(i) }

func asError(err error, target **Error) bool { return errors.As(err, target) }

// deref is *p, or nil for a nil pointer: the value of a field that is
// null when the output did not print it.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func ptr[T any](v T) *T { return &v }
