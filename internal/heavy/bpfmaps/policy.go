package bpfmaps

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/labrun/labrun/internal/boundary/bpfentries"
)

// authTypeName mirrors policy/types AuthType.String (pkg/policy/types/auth.go L67).
func authTypeName(a uint8) string {
	switch a {
	case 0:
		return "disabled"
	case 1:
		return "spire"
	case 2:
		return "test-always-fail"
	}
	return "Unknown-auth-type-" + strconv.Itoa(int(a))
}

// portProtoString mirrors PolicyKey.PortProtoString (policymap.go L287).
func portProtoString(proto uint8, dport uint16, prefixLen uint8) string {
	protoStr := bpfentries.ProtoName(proto)
	switch {
	case prefixLen == 0, prefixLen == 8:
		return protoStr
	case prefixLen > 8 && prefixLen < 24:
		portLen := uint16(0xffff) >> (prefixLen - 8)
		return fmt.Sprintf("%d-%d/%s", dport, dport+portLen, protoStr)
	case prefixLen == 24:
		return fmt.Sprintf("%d/%s", dport, protoStr)
	}
	return fmt.Sprintf("<INVALID PREFIX LENGTH: %d>", prefixLen)
}

func decodePolicy(ep uint16, k, v []byte) bpfentries.PolicyEntry {
	keyPrefix := hostEndian.Uint32(k[0:4])
	prefixLen := uint8(keyPrefix - policyStaticPrefixBits)
	portPrefixLen := uint8(0)
	if prefixLen > 8 {
		portPrefixLen = prefixLen - 8
	}
	proto := k[9]
	dport := netEndian.Uint16(k[10:12])
	dir := "Ingress"
	if k[8]&1 != 0 {
		dir = "Egress"
	}
	flags := v[2]
	deny := flags&1 != 0
	verdict := "Allow"
	if deny {
		verdict = "Deny"
	}
	return bpfentries.PolicyEntry{
		EndpointID:    ep,
		Direction:     dir,
		Identity:      hostEndian.Uint32(k[4:8]),
		Protocol:      bpfentries.ProtoName(proto),
		ProtoNum:      proto,
		Port:          dport,
		PrefixLen:     prefixLen,
		PortPrefixLen: portPrefixLen,
		PortProto:     portProtoString(proto, dport, prefixLen),
		Deny:          deny,
		Verdict:       verdict,
		ProxyPort:     netEndian.Uint16(v[0:2]),
		AuthType:      authTypeName(v[3] & 0x7f),
		AuthExplicit:  v[3]&0x80 != 0,
		Precedence:    hostEndian.Uint32(v[4:8]),
		Cookie:        hostEndian.Uint32(v[8:12]),
		Valid:         flags>>3 == prefixLen,
	}
}

// Policy dumps the policy map of one endpoint (cilium_policy_v3_%05d).
func (r *Reader) Policy(endpointID uint16) (bpfentries.PolicyEntries, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	om, err := r.get(PolicyMapName(endpointID))
	if err != nil {
		return nil, err
	}
	out := bpfentries.PolicyEntries{}
	err = dumpMap(om, func(k *rawPolicyKey, v *rawPolicyEntry) {
		out = append(out, decodePolicy(endpointID, k[:], v[:]))
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Deny != b.Deny {
			return a.Deny
		}
		if a.Direction != b.Direction {
			return a.Direction == "Ingress"
		}
		if a.Identity != b.Identity {
			return a.Identity < b.Identity
		}
		if a.ProtoNum != b.ProtoNum {
			return a.ProtoNum < b.ProtoNum
		}
		if a.Port != b.Port {
			return a.Port < b.Port
		}
		return a.PrefixLen < b.PrefixLen
	})
	return out, nil
}
