// Package parse turns the text that Cilium's and Linux's command-line tools
// print into typed Go values, so that lab playbooks can say
// lb.Backends("10.43.1.2:80/TCP") instead of piping through awk.
//
// Every parser has the shape
//
//	func ParseXxx(text string) (Xxx, error)
//
// and returns a plain value: structs whose exported fields all carry
// `json:"lowerCamel" expr:"lowerCamel"` tags, numbers as int/int64/float64
// (pointers, null in JSON, for numbers that only some versions or formats
// print: a parser never shows a 0 nobody printed), and lists as non-nil
// slices (so JSON shows [] rather than null). Output cut mid-line (text
// that does not end with a newline), or a record missing a field every
// version prints, is an *Error (Truncated for a cut), never a record with
// made-up fields. Parser.Parse, the entry the engine uses, takes colour
// codes off first (plainText), so every parser reads coloured output
// alike; the ParseXxx functions read plain text. Small
// helper methods (LBList.Backends, CTList.Count, IPTables.CountContaining,
// ...) are exported so that expr expressions can call them.
//
// The parsers follow the printing code of the tools they read (Cilium
// v1.20.1 first, with the 1.15-1.19 variants that Cilium's source and public
// captures show; bpftool, iproute2, iptables, net-tools, busybox and curl).
// Where a format is closed (a table, a conntrack line) an unexpected line is
// an error that names the line; where a format is open-ended (status labels,
// new conntrack key=value pairs, config keys) unknown content is kept in a
// generic map instead of being dropped or rejected.
//
// Errors are *Error values and read like
//
//	parse cilium-bpf-ct-list: line 17: expected "PROTO OUT|IN|SVC src -> dst ...": "garbage here"
//
// The registry in registry.go lists every parser with its CLI kind and expr
// function name; the engine wires it into expr and `labrun parse KIND`.
package parse
