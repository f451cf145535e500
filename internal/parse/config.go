package parse

import (
	"slices"
	"strings"
	"unicode"
)

const kindConfig = "cilium-config"

// Config is the parsed `cilium-dbg config` / `cilium-dbg config -a`.
//
// With -a the output has two sections: "#### Read-only configurations ####"
// (every exported field of the agent's DaemonConfig, sorted, then
// k8s-configuration and the immutable options) and "##### Read-write
// configurations #####" (the mutable options as Enabled/Disabled). Without
// -a there is only the read-write part, without its heading.
type Config struct {
	// Values maps every key to its value as printed. A key in both
	// sections takes the read-write value (the one in effect). Keys of a
	// nested map ("HiveConfig" followed by tab-indented lines) are
	// "Parent.Key". Keys before any section heading (plain `config`,
	// or grep'd `config -a`) are only here: the output does not say
	// which section they belong to.
	Values map[string]string `json:"values" expr:"values"`
	// ReadOnly and ReadWrite are the keys of each section of `config -a`
	// with their values as printed (the read-write ones Enabled or
	// Disabled); empty when the output has no such heading.
	ReadOnly  map[string]string `json:"readOnly" expr:"readOnly"`
	ReadWrite map[string]string `json:"readWrite" expr:"readWrite"`
	// Maps are the names of the nested maps, in printed order: a line
	// with a name and no colon ("HiveConfig", or "BPFMapEventBuffers" for
	// an empty map). A name is not a key with an empty value: Get gives
	// "" and Has false for it, since no value was printed (and a key cut
	// short before its colon looks the same).
	Maps []string `json:"maps" expr:"maps"`
}

// Get returns the value of key, or "" when absent. An exact match wins;
// otherwise keys are compared ignoring case, '-' and '_', so
// Get("service-no-backend-response") finds "ServiceNoBackendResponse".
func (c Config) Get(key string) string {
	if v, ok := c.Values[key]; ok {
		return v
	}
	want := normKey(key)
	for k, v := range c.Values {
		if normKey(k) == want {
			return v
		}
	}
	return ""
}

// Has reports whether key (matched as in Get) is present.
func (c Config) Has(key string) bool {
	if _, ok := c.Values[key]; ok {
		return true
	}
	want := normKey(key)
	for k := range c.Values {
		if normKey(k) == want {
			return true
		}
	}
	return false
}

func normKey(k string) string {
	k = strings.ToLower(k)
	k = strings.ReplaceAll(k, "-", "")
	return strings.ReplaceAll(k, "_", "")
}

// ParseConfig parses `cilium-dbg config [-a]`. Lines are
// "%-34s: %v" (key padded to 34 columns, a colon, a space, the value);
// keys never contain a colon, so the line is cut at the first one. A line
// with no colon is the name of a nested map whose entries follow as
// "\t%-26s: %v" lines.
func ParseConfig(text string) (Config, error) {
	if err := refuseCut(kindConfig, "keys", text, ParseConfig, func(c Config) int { return len(c.Values) }); err != nil {
		return Config{}, err
	}
	c := Config{Values: map[string]string{}, ReadOnly: map[string]string{}, ReadWrite: map[string]string{}, Maps: []string{}}
	unsectioned := map[string]string{}
	section := unsectioned
	r := newLineReader(text)
	parent := ""
	seen := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "#") {
			switch {
			case strings.Contains(t, "Read-only configurations"):
				section = c.ReadOnly
			case strings.Contains(t, "Read-write configurations"):
				section = c.ReadWrite
			default:
				return Config{}, newError(kindConfig, r.num, line, "unknown section heading")
			}
			parent = ""
			continue
		}
		key, value, hasColon := strings.Cut(line, ":")
		indented := line[0] == ' ' || line[0] == '\t'
		if !hasColon {
			if indented || strings.ContainsAny(t, " \t") {
				return Config{}, newError(kindConfig, r.num, line, `expected "Key   : value"`)
			}
			if !isConfigKey(t, false) {
				return Config{}, newError(kindConfig, r.num, line, `expected "Key   : value"`)
			}
			parent = t // a nested map's name
			if !slices.Contains(c.Maps, parent) {
				c.Maps = append(c.Maps, parent)
			}
			continue
		}
		key = strings.TrimSpace(key)
		if !isConfigKey(key, indented) {
			return Config{}, newError(kindConfig, r.num, line, `expected "Key   : value"`)
		}
		if indented {
			if parent == "" {
				return Config{}, newError(kindConfig, r.num, line, "indented entry outside a nested map")
			}
			key = parent + "." + key
		} else {
			parent = ""
		}
		value = strings.TrimSpace(value)
		section[key] = value
		seen = true
	}
	if !seen {
		return Config{}, newError(kindConfig, 0, firstLine(text), `no "Key : value" line found`)
	}
	for k, v := range unsectioned {
		c.Values[k] = v
	}
	for k, v := range c.ReadOnly {
		c.Values[k] = v
	}
	for k, v := range c.ReadWrite {
		c.Values[k] = v
	}
	return c, nil
}

// isConfigKey accepts DaemonConfig field and option names (letters,
// digits, '-', '_', '.'). Keys of nested maps come from map keys and may be
// anything printable without spaces.
func isConfigKey(k string, nested bool) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for _, c := range k {
		if nested {
			if !unicode.IsPrint(c) || unicode.IsSpace(c) {
				return false
			}
			continue
		}
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
