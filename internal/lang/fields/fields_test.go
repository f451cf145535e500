package fields

import (
	"reflect"
	"testing"
)

type target struct {
	Pod       string `yaml:"pod" required:"true" doc:"Pod name."`
	Container string `yaml:"container"`
}

type spec struct {
	Name    string `yaml:"name" doc:"What it is."`
	target         // its keys are the spec's own
	Skipped string `yaml:"-"`
	NoTag   string
	hidden  string   `yaml:"hidden"`
	Args    []string `yaml:"args,omitempty"`
}

func TestOf(t *testing.T) {
	_ = spec{}.hidden
	got := Of(reflect.TypeOf(spec{}))
	want := []Field{
		{Key: "name", Index: []int{0}, Type: reflect.TypeOf(""), Doc: "What it is."},
		{Key: "pod", Index: []int{1, 0}, Type: reflect.TypeOf(""), Required: true, Doc: "Pod name."},
		{Key: "container", Index: []int{1, 1}, Type: reflect.TypeOf("")},
		{Key: "args", Index: []int{5}, Type: reflect.TypeOf([]string(nil))},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Of:\ngot  %+v\nwant %+v", got, want)
	}
	if k := Keys(reflect.TypeOf(spec{})); !reflect.DeepEqual(k, []string{"name", "pod", "container", "args"}) {
		t.Errorf("Keys = %v", k)
	}
	v := reflect.ValueOf(&spec{}).Elem()
	v.FieldByIndex(got[1].Index).SetString("web")
	if v.Interface().(spec).Pod != "web" {
		t.Error("Index does not lead to the embedded field")
	}
}
