package parse

import (
	"strings"
	"testing"
)

// The ipcache list is read as printed (header or grep'd rows, a second
// value of a prefix under an empty column, -o json), and every value
// missing a field, cut short or naming an unknown flag is refused with its
// line and reason instead of read with a zero.
func TestIPCacheList(t *testing.T) {
	const header = "IP PREFIX/ADDRESS   IDENTITY\n"
	tests := []struct {
		name, in string
		want     string // prefix identity tunnel flags of each entry, or "error: ..." (a substring)
	}{
		{"table", header +
			"10.42.1.0/24        identity=2 encryptkey=0 tunnelendpoint=10.250.42.3 flags=hastunnel   \n" +
			"10.250.42.3/32      identity=6 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>   \n",
			"10.42.1.0/24 2 10.250.42.3 [hastunnel] | 10.250.42.3/32 6 0.0.0.0 []"},
		{"grep'd rows", "10.42.1.9/32        identity=33624 encryptkey=0 tunnelendpoint=10.250.42.3 flags=hastunnel\n",
			"10.42.1.9/32 33624 10.250.42.3 [hastunnel]"},
		{"a second value under an empty column, a cluster, two flags", header +
			"10.1.0.0/16@3       identity=9 encryptkey=1 tunnelendpoint=192.0.2.7 flags=hastunnel,remotecluster   \n" +
			"                    identity=10 encryptkey=0 tunnelendpoint=0.0.0.0 flags=skiptunnel   \n",
			"10.1.0.0/16@3 9 192.0.2.7 [hastunnel remotecluster] | 10.1.0.0/16@3 10 0.0.0.0 [skiptunnel]"},
		{"json, ordered by prefix", `{"10.250.42.3/32":["identity=6 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>"],"10.42.1.0/24":["identity=2 encryptkey=0 tunnelendpoint=10.250.42.3 flags=hastunnel"]}`,
			"10.42.1.0/24 2 10.250.42.3 [hastunnel] | 10.250.42.3/32 6 0.0.0.0 []"},
		{"header only", header, ""},
		{"empty", "", "error: empty input"},
		{"a value without flags=", header + "10.0.0.1/32   identity=1 encryptkey=0 tunnelendpoint=0.0.0.0\n", `error: line 2: expected the value "identity=N encryptkey=N tunnelendpoint=IP flags=F"`},
		{"fields out of order", "10.0.0.1/32   encryptkey=0 identity=1 tunnelendpoint=0.0.0.0 flags=<none>\n", "error: line 1: expected identity= as field 1"},
		{"cut inside a row", header + "10.0.0.1/32   identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>\n10.0.0.2/32   identity=1 encr",
			"error: line 3: output ends mid-line, without a final newline (truncated); 1 complete entries before it"},
		{"an unknown flag", "10.0.0.1/32   identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=newflag\n", `error: line 1: unknown flag "newflag"`},
		{"a value under an empty column first", header + "      identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>\n", "error: line 2: a value under an empty prefix column"},
		{"not a prefix", "web   identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>\n", `error: line 1: expected an IP prefix`},
		{"cluster 0 is never printed", "10.0.0.1/32@0   identity=1 encryptkey=0 tunnelendpoint=0.0.0.0 flags=<none>\n", "error: line 1: expected a cluster id 1-65535"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			es, err := ParseIPCacheList(tt.in)
			if strings.HasPrefix(tt.want, "error: ") {
				if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(tt.want, "error: ")) {
					t.Fatalf("err %v, want one containing %q (got %+v)", err, strings.TrimPrefix(tt.want, "error: "), es)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, strings.TrimSpace(strings.Join([]string{e.Prefix, itoa(int(e.Identity)), e.TunnelEndpoint, "[" + strings.Join(e.FlagNames, " ") + "]"}, " ")))
			}
			if s := strings.Join(got, " | "); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}
