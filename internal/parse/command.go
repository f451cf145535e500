package parse

import (
	"net/url"
	"path"
	"slices"
	"strings"
)

// ForCommand returns the parser that reads the output of a command line,
// such as a capture's "# command:" header records it: the parser in All
// one of whose Commands the line matches with the most words (the first
// of those), so that "cilium-dbg bpf policy get -n <web's endpoint id>"
// is bpf policy get's although its words hold endpoint get's too.
// Wrappers that run the command elsewhere are looked through: whatever
// comes before "--" (kubectl exec ... --, nsenter ... --), and a leading
// sudo, node-exec or timeout DURATION.
func ForCommand(cmdline string) (Parser, bool) {
	f := commandWords(cmdline)
	if len(f) == 0 {
		return Parser{}, false
	}
	var best Parser
	bestWords := 0
	for _, p := range All {
		for _, c := range p.Commands {
			if n := len(strings.Fields(c)); n > bestWords && commandMatches(c, f) {
				best, bestWords = p, n
			}
		}
	}
	return best, bestWords > 0
}

// commandWords splits a command line into words, without its wrappers.
func commandWords(cmdline string) []string {
	f := strings.Fields(cmdline)
	// kubectl exec ... -- CMD and nsenter ... -- CMD run CMD; a "--" of
	// the command's own (tcpdump -i any -- tcp port 80) is its own
	if i := slices.Index(f, "--"); i >= 0 && slices.ContainsFunc(f[:i], func(w string) bool {
		return path.Base(w) == "kubectl" || w == "nsenter"
	}) {
		f = f[i+1:]
	}
	for len(f) > 0 {
		switch {
		case f[0] == "sudo" || path.Base(f[0]) == "node-exec" || f[0] == "nsenter":
			f = f[1:]
		case f[0] == "timeout" && len(f) > 2:
			// timeout DURATION COMMAND: a bounded capture's command
			f = f[2:]
		default:
			return f
		}
	}
	return f
}

// commandMatches reports whether the words f of a command line match
// pattern, one of a Parser's Commands.
func commandMatches(pattern string, f []string) bool {
	want := strings.Fields(pattern)
	if want[0] == "GET" {
		p, ok := agentRequest(f)
		return ok && (p == want[1] || strings.HasSuffix(want[1], "/") && strings.HasPrefix(p, want[1]))
	}
	if _, ok := agentRequest(f); ok || program(f[0]) != want[0] {
		return false
	}
	for _, w := range want[1:] {
		if not, ok := strings.CutPrefix(w, "!"); ok {
			if slices.Contains(f[1:], not) {
				return false
			}
		} else if !slices.Contains(f[1:], w) {
			return false
		}
	}
	return true
}

// program is the name of the program a command line runs. cilium, the
// name of cilium-dbg before Cilium 1.15, prints the same.
func program(word string) string {
	name := path.Base(word)
	if name == "cilium" {
		return "cilium-dbg"
	}
	return name
}

// agentRequest returns the path of the URL that a command line asks the
// Cilium agent's API for, its last word, when it is curl --unix-socket.
func agentRequest(f []string) (string, bool) {
	if program(f[0]) != "curl" || !slices.Contains(f, "--unix-socket") {
		return "", false
	}
	u, err := url.Parse(f[len(f)-1])
	if err != nil {
		return "", false
	}
	return u.Path, true
}
