package parse

import "testing"

func TestConfigAll(t *testing.T) {
	c, err := ParseConfig(input(t, "synthetic/cilium-config/v1.20-all.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "no-backend response", c.Get("ServiceNoBackendResponse"), "reject")
	eq(t, "kebab-case lookup", c.Get("service-no-backend-response"), "reject")
	eq(t, "read-only section", c.ReadOnly["ServiceNoBackendResponse"], "reject")
	eq(t, "read-write section", c.ReadWrite["PolicyEnforcement"], "default")
	eq(t, "mutable option", c.Get("DropNotification"), "Enabled")
	eq(t, "nested map entry", c.Get("UnsafeDaemonConfigOption.BPFSocketLBHostnsOnly"), "Disabled")
	eq(t, "empty value", c.Has("k8s-configuration"), true)
	eq(t, "empty value text", c.Get("k8s-configuration"), "")
	eq(t, "missing", c.Has("NoSuchKey"), false)
	eq(t, "IPAM", c.Get("IPAM"), "kubernetes")
}

func TestConfigPlainAndErrors(t *testing.T) {
	// `cilium-dbg config` without -a prints no heading, nor does grep'd
	// `config -a`: the keys are in Values, in neither section.
	c, err := ParseConfig("Debug                             : Disabled\nPolicyEnforcement                 : default\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "values", c.Values, map[string]string{"Debug": "Disabled", "PolicyEnforcement": "default"})
	eq(t, "read-write empty", c.ReadWrite, map[string]string{})
	eq(t, "read-only empty", c.ReadOnly, map[string]string{})
	_, err = ParseConfig("")
	wantError(t, err, kindConfig, 0, "no \"Key : value\"")
	_, err = ParseConfig("Debug : Disabled\nthis is not config\n")
	wantError(t, err, kindConfig, 2, "expected \"Key   : value\"")
	_, err = ParseConfig("\tLogThreshold : Disabled\n")
	wantError(t, err, kindConfig, 1, "outside a nested map")
	_, err = ParseConfig("#### Something else ####\n")
	wantError(t, err, kindConfig, 1, "unknown section")
}
