package actions

import (
	"reflect"
	"strings"
	"testing"
)

// CheckSpec reports the type's problems and the action's own together, and
// gives compute its result type from the spec.
func TestCheckSpec(t *testing.T) {
	write, _ := Lookup("write")
	result, errs := write.CheckSpec(literalSpec(t, "{path: a.txt, txt: hi}"), &StaticContext{HasOutputDir: true})
	got := errs.Error()
	for _, want := range []string{`unknown key "txt" (did you mean "text"?)`, "expected one of the keys [json text kv]"} {
		if !strings.Contains(got, want) {
			t.Errorf("write: problems %q lack %q", got, want)
		}
	}
	if result != write.Result {
		t.Errorf("write's result type is %v, want %v", result, write.Result)
	}

	compute, _ := Lookup("compute")
	result, errs = compute.CheckSpec(literalSpec(t, "{port: 80, name: web}"), &StaticContext{})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if result.Kind() != reflect.Struct || result.NumField() != 2 || result.Field(0).Tag.Get("expr") != "port" || result.Field(0).Type.Kind() != reflect.Int {
		t.Errorf("compute's result type is %v, want a struct of port int and name string", result)
	}
}

// labrun actions says what a step of each action changes.
func TestEffect(t *testing.T) {
	for _, tc := range []struct{ action, want string }{
		{"write", "writes a file in the output directory; check compares the learner's file instead"},
		{"run", "read-only unless mutates: true says it changes the system; check skips it then"},
		{"delete", "changes the cluster: deletes objects; check skips it"},
		{"get", "read-only"},
	} {
		a, ok := Lookup(tc.action)
		if !ok {
			t.Fatalf("no action %s", tc.action)
		}
		if got := a.Effect(); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.action, got, tc.want)
		}
	}
	for _, a := range All() {
		if a.Mutates && a.Changes == "" {
			t.Errorf("%s changes the system but does not say what", a.Name)
		}
	}
}
