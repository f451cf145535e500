package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// No value of a secret variable or env name reaches the journal, the
// reports or what labrun prints; [REDACTED] stands in its place.
func TestSecretsRedactedEverywhere(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	pb := filepath.Join(dir, "p.yaml")
	t.Setenv("DB_PASSWORD", `pa"ss<w0rd>`)
	os.WriteFile(pb, []byte(`name: secrets
vars: {out: x, apiToken: "", pin: 0}
env: [DB_PASSWORD]
secret: [pin]
outputDir: ${{ vars.out }}
steps:
  - id: echo
    run: {argv: [echo, "${{ vars.apiToken }}", "${{ env.DB_PASSWORD }}", "${{ vars.pin }}"]}
  - id: call
    http: {url: "http://127.0.0.1:1/?t=${{ vars.apiToken }}&p=${{ env.DB_PASSWORD }}"}
finally:
  - id: check
    assert:
      - that: vars.apiToken + env.DB_PASSWORD == string(vars.pin)
`), 0o644)
	var stdout, stderr bytes.Buffer
	code := Main([]string{"run", "--no-progress", "--set", "out=" + out, "--set", "apiToken=s3cr3t-T0KEN", "--set", "pin=98765",
		"--report", "json=" + filepath.Join(out, "report.json"), "--report", "junit=" + filepath.Join(dir, "report.xml"), pb}, &stdout, &stderr)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	outputs := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
	for _, f := range []string{filepath.Join(out, ".labrun", "journal.jsonl"), filepath.Join(out, "report.json"), filepath.Join(dir, "report.xml")} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		outputs[f] = string(b)
	}
	for name, text := range outputs {
		for _, secret := range []string{"s3cr3t-T0KEN", "pa", "98765", "w0rd"} {
			if strings.Contains(text, secret) && (secret != "pa" || strings.Contains(text, `pa"ss`) || strings.Contains(text, `pa\"ss`) || strings.Contains(text, "pa&#34;ss")) {
				t.Errorf("%s holds %q:\n%s", name, secret, text)
			}
		}
		if name != "stderr" && !strings.Contains(text, "[REDACTED]") {
			t.Errorf("%s has no [REDACTED]:\n%s", name, text)
		}
	}
}
