package diag

import "testing"

func TestSuggest(t *testing.T) {
	words := []string{"steps", "name", "vars", "outputDir", "finally", "assert"}
	for word, want := range map[string]string{
		"step":      "steps",
		"asert":     "assert",
		"nmae":      "name", // a swapped pair is one typo
		"outputdir": "outputDir",
		"xyz":       "",
		"v":         "",
	} {
		if got := Suggest(word, words); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", word, got, want)
		}
	}
}

func TestListSortsAndDropsDuplicates(t *testing.T) {
	var l List
	l.Add(Pos{File: "b.yaml", Line: 1, Col: 1}, "z")
	l.Add(Pos{File: "a.yaml", Line: 3, Col: 2}, "y")
	l.Add(Pos{File: "a.yaml", Line: 3, Col: 1}, "x")
	l.Add(Pos{File: "a.yaml", Line: 3, Col: 1}, "x")
	got := l.Sort().Error()
	want := "a.yaml:3:1: x\na.yaml:3:2: y\nb.yaml:1:1: z"
	if got != want {
		t.Errorf("sorted:\n%s\nwant:\n%s", got, want)
	}
	if (List{}).Err() != nil {
		t.Error("an empty list is an error")
	}
}
