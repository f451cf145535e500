package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// labDir writes the 8 lab files, with the given files replaced.
func labDir(t *testing.T, replace map[string]string) string {
	t.Helper()
	files := map[string]string{
		"iptables.json": `{"cluster_ip": "10.43.0.9", "kube_svc_lines": 0, "cilium_lines": 37}`,
		"svc.json":      `{"service_id": 3, "backends": ["10.42.0.1:8080", "10.42.0.2:8080"]}`,
		"scale.json":    `{"backends": ["10.42.0.1:8080", "10.42.0.2:8080", "10.42.0.3:8080"], "new_backends": ["10.42.0.3:8080"]}`,
		"ct.json":       `{"backend": "10.42.0.1:8080", "svc_entries": 0}`,
		"prog.json":     `{"endpoint_id": 526, "attach": "tcx/ingress"}`,
		"nodeport.json": `{"node_port": 30780, "http_code": 200}`,
		"ghost.json":    `{"curl_exit": 7, "seconds": 0.000089}`,
		"report.txt":    "web_backends=4\nholder_program=cil_from_container\n",
	}
	for k, v := range replace {
		files[k] = v
	}
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCompareLabDirs(t *testing.T) {
	labrun := labDir(t, nil)
	for _, tc := range []struct {
		name    string
		replace map[string]string
		want    string // "" for no difference, else a part of the one difference
	}{
		{"same", nil, ""},
		{"same values, other layout", map[string]string{"ct.json": "{\n  \"backend\": \"10.42.0.1:8080\",\n  \"svc_entries\": 0.0\n}\n"}, ""},
		{"per-run values differ", map[string]string{
			"ghost.json": `{"curl_exit": 7, "seconds": 7.2e-05}`,
			"scale.json": `{"backends": ["10.42.0.1:8080", "10.42.0.2:8080", "10.42.0.7:8080"], "new_backends": ["10.42.0.7:8080"]}`,
		}, ""},
		{"value", map[string]string{"prog.json": `{"endpoint_id": 527, "attach": "tcx/ingress"}`}, "prog.json endpoint_id: labrun has 526, bash has 527"},
		{"number as string", map[string]string{"nodeport.json": `{"node_port": 30780, "http_code": "200"}`}, "nodeport.json http_code: labrun has number 200, bash has string 200"},
		{"per-run value of another type", map[string]string{"ghost.json": `{"curl_exit": 7, "seconds": "0.1"}`}, "ghost.json seconds: labrun has number"},
		{"per-run list of another length", map[string]string{"scale.json": `{"backends": ["10.42.0.1:8080"], "new_backends": ["10.42.0.3:8080"]}`}, "scale.json backends: labrun has list of 3"},
		{"key order", map[string]string{"ct.json": `{"svc_entries": 0, "backend": "10.42.0.1:8080"}`}, "ct.json: keys [backend svc_entries], bash has [svc_entries backend]"},
		{"missing key", map[string]string{"ct.json": `{"backend": "10.42.0.1:8080"}`}, "ct.json: keys"},
		{"kv value", map[string]string{"report.txt": "web_backends=2\nholder_program=cil_from_container\n"}, `report.txt web_backends: labrun has "4", bash has "2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diffs, err := compareLabDirs(labrun, labDir(t, tc.replace))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(diffs) > 0:
				t.Fatalf("differences: %q", diffs)
			case tc.want != "" && (len(diffs) != 1 || !strings.Contains(diffs[0], tc.want)):
				t.Fatalf("differences %q, want one containing %q", diffs, tc.want)
			}
		})
	}
}

func TestCompareLabDirsMissingFile(t *testing.T) {
	bash := labDir(t, nil)
	if err := os.Remove(filepath.Join(bash, "svc.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := compareLabDirs(labDir(t, nil), bash); err == nil || !strings.Contains(err.Error(), "svc.json") {
		t.Fatalf("error %v, want one naming svc.json", err)
	}
}

func TestSeries(t *testing.T) {
	s := newSeries("x", "ms", []float64{5, 1, 3, 4})
	if s.Median != 3.5 || s.Min != 1 || s.Max != 5 {
		t.Fatalf("%+v", s)
	}
	if got := s.String(); got != "3.50 ms (1.00–5.00)" {
		t.Fatalf("String() = %q", got)
	}
	for v, want := range map[float64]string{0: "0", 0.0123: "0.0123", 0.5: "0.500", 7.25: "7.25", 42.42: "42.4", 1519.7: "1520"} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
}
