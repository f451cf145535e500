package bpfentries

import "strconv"

// ProtoName is Cilium's name of an IP protocol number, as its maps'
// entries print it (u8proto.U8proto.String, pkg/u8proto/u8proto.go):
// known numbers by name, the rest in decimal. The map reader and the
// parsers of cilium-dbg's output name protocols by it alike.
func ProtoName(p uint8) string {
	switch p {
	case 0:
		return "ANY"
	case 1:
		return "ICMP"
	case 2:
		return "IGMP"
	case 4:
		return "IPIP"
	case 6:
		return "TCP"
	case 17:
		return "UDP"
	case 41:
		return "IPv6"
	case 47:
		return "GRE"
	case 50:
		return "ESP"
	case 51:
		return "AH"
	case 58:
		return "ICMPv6"
	case 112:
		return "VRRP"
	case 132:
		return "SCTP"
	}
	return strconv.Itoa(int(p))
}
