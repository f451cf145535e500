package parsetest

import (
	"strings"
	"testing"
)

// Every leaf of a text parser's result is backed by the text: a string
// occurs in it (white space runs alike), a number is one of its numbers,
// and "", 0 or false are printed so or are null.
func TestUnprinted(t *testing.T) {
	type addr struct {
		IP   string  `json:"ip"`
		Port int     `json:"port"`
		Zone *string `json:"zone"`
	}
	type row struct {
		Name    string  `json:"name"`
		Local   addr    `json:"local"`
		Flow    int     `json:"flow"`
		Active  bool    `json:"active"`
		Seen    bool    `json:"seen"`
		Count   int     `json:"count"`
		Note    *string `json:"note"`
		Comment string  `json:"comment"`
		Ifindex int     `json:"ifindex"`
	}
	text := "web   Ok   ready 10.42.0.1:8080 flow 0x1f (active) eth0\ncomment= \n"
	for _, tt := range []struct {
		name    string
		res     any
		derived []string
		want    []string
	}{
		{name: "all printed", res: []row{{Name: "Ok ready", Local: addr{IP: "10.42.0.1", Port: 8080}, Flow: 31, Active: true, Count: 1}},
			derived: []string{"[].active", "[].seen", "[].count", "[].ifindex"}},
		{name: "a string not printed", res: []row{{Name: "Ok  web", Local: addr{IP: "10.42.0.1", Port: 8080}, Flow: 31}},
			derived: []string{"[].active", "[].seen", "[].count", "[].ifindex"},
			want:    []string{`[].name is "Ok  web", which the text does not print`}},
		{name: "zeros not printed", res: []row{{Name: "web", Local: addr{IP: "10.42.0.1"}, Flow: 31, Comment: "zz"}},
			want: []string{
				`[].active is false, and the text does not say false: a flag the parser derives is declared so`,
				`[].comment is "zz", which the text does not print`,
				`[].count is 0, and the text prints no 0: null if the text has nothing there`,
				`[].ifindex is 0, and the text prints no 0: null if the text has nothing there`,
				`[].local.port is 0, and the text prints no 0: null if the text has nothing there`,
				`[].seen is false, and the text does not say false: a flag the parser derives is declared so`,
			}},
		{name: "numbers only as printed", res: []row{{Name: "web", Local: addr{IP: "10.42.0.1", Port: 42}, Flow: 1, Count: 8080}},
			derived: []string{"[].active", "[].seen", "[].ifindex", "[].comment"},
			want: []string{
				`[].flow is 1, which no number of the text is`,
				`[].local.port is 42, which no number of the text is`,
			}},
		{name: "empty string", res: []struct {
			Name    string `json:"name"`
			Comment string `json:"comment"`
		}{{Name: "", Comment: ""}},
			want: []string{`[].name is "", and the text prints no "name" with an empty value: null if the text has nothing there`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Unprinted(text, tt.res, tt.derived...)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Unprinted =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// The numbers of a text are whole words: not the digits of a name (eth0)
// nor the parts of an address or a version; hex with 0x and signed and
// fractional decimals are.
func TestNumericTokens(t *testing.T) {
	got := numericTokens("eth0 k8s 10.42.0.1 v1.20.1 0x1A -3 0.25 port=80\n7")
	for _, n := range []float64{26, -3, 0.25, 80, 7} {
		if !got[n] {
			t.Errorf("%v is not among the numbers %v", n, got)
		}
	}
	for _, n := range []float64{0, 8, 42, 10, 1, 20} {
		if got[n] {
			t.Errorf("%v is among the numbers %v, though only a name or an address holds it", n, got)
		}
	}
}

// A derived field is not checked, nor what it holds; the kinds' lists
// name paths their results have.
func TestUnprintedBeyond(t *testing.T) {
	res := struct {
		Entries []struct {
			Deny bool `json:"deny"`
		} `json:"entries"`
		Empty bool `json:"empty"`
	}{Entries: []struct {
		Deny bool `json:"deny"`
	}{{}}}
	got, err := UnprintedBeyond("cilium-bpf-policy-get", "Allow", res)
	if err != nil || len(got) != 0 {
		t.Errorf("UnprintedBeyond = %q, %v; want nothing (deny and empty are derived)", got, err)
	}
	got, _ = UnprintedBeyond("ss", "Allow", res)
	if len(got) != 2 {
		t.Errorf("UnprintedBeyond for a kind with no such derived fields = %q, want both", got)
	}
}

// A number printed by a name the parser documents (a reserved identity
// of cilium-dbg monitor) is printed; the name must be a word of its own.
func TestUnprintedNames(t *testing.T) {
	res := struct {
		Remote int `json:"remote"`
	}{Remote: 1}
	for text, want := range map[string]int{"remote ID host, proto 6": 0, "identity host->unknown: 10.0.0.1": 0, "remote ID hostname, proto 6": 1, "remote ID host-x": 1, "remote ID 7, proto 6": 1} {
		got, err := UnprintedBeyond("cilium-monitor", text, res)
		if err != nil || len(got) != want {
			t.Errorf("UnprintedBeyond(%q) = %q, %v; want %d findings", text, got, err, want)
		}
	}
	if got, _ := UnprintedBeyond("ss", "remote ID host", res); len(got) != 1 {
		t.Errorf("a kind without names read host as 1: %q", got)
	}
}
