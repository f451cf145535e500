package parse

import (
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"
)

const kindMapList = "cilium-map-list"

// MapInfo is one row of `cilium-dbg map list`.
type MapInfo struct {
	// Name is the map's pinned name ("cilium_lb4_services_v2",
	// "cilium_policy_v3_00042"), the base of its path under the bpffs.
	Name string `json:"name" expr:"name"`
	// Entries is the number of the map's entries in the agent's
	// userspace cache (the "Num entries" column; with -o json, the
	// non-null elements of its cache); null when Cilium printed
	// "unknown" (a map without a userspace cache, whose JSON cache is
	// null): the agent does not count such a map's entries.
	Entries *int `json:"entries" expr:"entries"`
	// EntriesKnown is whether Entries was printed: false for "unknown"
	// (Entries null), true otherwise.
	EntriesKnown bool `json:"entriesKnown" expr:"entriesKnown"`
	// Errors is the number of cached entries whose last sync to the
	// kernel failed (the "Num errors" column; with -o json, the cache's
	// elements with a last-error); 0 when all are in sync, and for a map
	// without a cache, for which the table prints 0 too.
	Errors int `json:"errors" expr:"errors"`
	// CacheEnabled is whether the agent keeps a userspace cache of the
	// map ("Cache enabled": true or false; with -o json, whether its
	// cache is a list rather than null).
	CacheEnabled bool `json:"cacheEnabled" expr:"cacheEnabled"`
}

// MapList is the parsed `cilium-dbg map list`.
type MapList []MapInfo

// Get returns the map called name, or a zero MapInfo (Name "").
func (l MapList) Get(name string) MapInfo {
	for _, m := range l {
		if m.Name == name {
			return m
		}
	}
	return MapInfo{}
}

// Names returns the names that start with prefix, in listed order.
func (l MapList) Names(prefix string) []string {
	out := []string{}
	for _, m := range l {
		if strings.HasPrefix(m.Name, prefix) {
			out = append(out, m.Name)
		}
	}
	return out
}

// PolicyMap returns the name of endpoint id's policy map in this list, or ""
// if none is listed. The name changed across Cilium versions, so every known
// form is tried: "cilium_policy_v3_%05d" (1.20), "cilium_policy_v2_%05d"
// (1.17-1.19), "cilium_policy_%05d" (up to 1.16), and the same without
// zero padding.
func (l MapList) PolicyMap(id int) string {
	for _, prefix := range []string{"cilium_policy_v3_", "cilium_policy_v2_", "cilium_policy_"} {
		for _, name := range []string{fmt.Sprintf("%s%05d", prefix, id), prefix + strconv.Itoa(id)} {
			if l.Get(name).Name != "" {
				return name
			}
		}
	}
	return ""
}

// ParseMapList parses `cilium-dbg map list`: the table, or the JSON that
// `map list -o json` prints and the agent's API serves (GET /v1/map), see
// parseMapListJSON.
//
//	Name                     Num entries   Num errors   Cache enabled
//	cilium_policy_v3_01234   4             0            true
//	cilium_lb4_services_v2   unknown       0            false
func ParseMapList(text string) (MapList, error) {
	return jsonOrText(kindMapList, text, parseMapListJSON, parseMapListText)
}

// jsonMapList is models.BPFMapList. cache has no omitempty there: null is
// a map without a userspace cache, [] an empty cache.
type jsonMapList struct {
	Maps *[]struct {
		Path  *string `json:"path"`
		Cache *[]*struct {
			LastError string `json:"last-error"`
		} `json:"cache"`
	} `json:"maps"`
}

// parseMapListJSON reads the document the table is printed from, and makes
// each row as cilium-dbg's printMapList does (map_list.go): the name is the
// pin path's last element; with a cache, the entries are its non-null
// elements and the errors those with a last-error; without one, the
// entries are unknown (null) and the errors 0, as the table prints them.
func parseMapListJSON(text string) (MapList, error) {
	var doc jsonMapList
	if err := json.Unmarshal([]byte(text), &doc); err != nil {
		return nil, jsonError(kindMapList, text, err)
	}
	if doc.Maps == nil {
		return nil, newError(kindMapList, 0, "", `no "maps" list; is this cilium-dbg map list -o json?`)
	}
	out := make(MapList, 0, len(*doc.Maps))
	for i, m := range *doc.Maps {
		if m.Path == nil || *m.Path == "" {
			return nil, newError(kindMapList, 0, "", "map "+strconv.Itoa(i)+": no path")
		}
		info := MapInfo{Name: path.Base(*m.Path)}
		if m.Cache != nil {
			info.CacheEnabled, info.EntriesKnown = true, true
			n := 0
			for _, e := range *m.Cache {
				if e == nil {
					continue
				}
				n++
				if e.LastError != "" {
					info.Errors++
				}
			}
			info.Entries = &n
		}
		out = append(out, info)
	}
	return out, nil
}

func parseMapListText(text string) (MapList, error) {
	if err := refuseCut(kindMapList, "maps", text, parseMapListText, func(l MapList) int { return len(l) }); err != nil {
		return nil, err
	}
	r := newLineReader(text)
	out := MapList{}
	haveHeader := false
	for {
		line, ok := r.next()
		if !ok {
			break
		}
		if isBlank(line) {
			continue
		}
		if !haveHeader {
			if collapseSpace(line) != "Name Num entries Num errors Cache enabled" {
				return nil, newError(kindMapList, r.num, line, `expected header "Name Num entries Num errors Cache enabled"`)
			}
			haveHeader = true
			continue
		}
		// No cell has spaces and none is empty, so whitespace splitting
		// is safe here (unlike the service and endpoint tables).
		c := strings.Fields(line)
		if len(c) != 4 {
			return nil, newError(kindMapList, r.num, line, "expected \"name entries errors true|false\"")
		}
		m := MapInfo{Name: c[0]}
		if c[1] != "unknown" {
			n, err := strconv.Atoi(c[1])
			if err != nil {
				return nil, newError(kindMapList, r.num, line, `expected a number or "unknown" in Num entries`)
			}
			m.Entries, m.EntriesKnown = &n, true
		}
		n, err := strconv.Atoi(c[2])
		if err != nil {
			return nil, newError(kindMapList, r.num, line, "expected a number in Num errors")
		}
		m.Errors = n
		if m.CacheEnabled, err = strconv.ParseBool(c[3]); err != nil {
			return nil, newError(kindMapList, r.num, line, "expected true or false in Cache enabled")
		}
		out = append(out, m)
	}
	if !haveHeader {
		return nil, newError(kindMapList, 0, "", "empty input")
	}
	return out, nil
}
