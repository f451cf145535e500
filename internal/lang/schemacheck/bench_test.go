package schemacheck

import (
	"os"
	"testing"
)

// Compiling a lab schema costs about 1 ms on the 2-core test machine
// (checking it against the 2020-12 metaschema); Load caches the result, so
// a write in a loop pays it once.
func BenchmarkParseLabSchema(b *testing.B) {
	data, err := os.ReadFile("../../../playbooks/cca-datapath/schemas/svc.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Parse("svc.schema.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateLabFile(b *testing.B) {
	s, err := Load("../../../playbooks/cca-datapath/schemas/svc.schema.json")
	if err != nil {
		b.Fatal(err)
	}
	v := map[string]any{"service_id": 7, "frontend": "10.43.0.5:80", "backends": []any{"10.0.0.1:80", "10.0.0.2:80"}, "backend_pods": []any{"web-a", "web-b"}}
	for b.Loop() {
		if p := s.Validate(v); len(p) != 0 {
			b.Fatal(p)
		}
	}
}
