package kube

import (
	"regexp"
	"strings"
)

// redacted replaces anything that looks like a credential.
const redacted = "[REDACTED]"

// Patterns of credentials that may end up in an error text: an HTTP
// Authorization value, a JWT (service account tokens are JWTs), a PEM block
// (certificates and keys), a kubeconfig field that carries secret data, and
// long base64 runs (base64-encoded certificates and keys in kubeconfigs).
var secretPatterns = []*regexp.Regexp{
	regexp.MustCompile(`(?i)(authorization:\s*)?(bearer|basic)\s+[A-Za-z0-9\-._~+/]{8,}=*`),
	regexp.MustCompile(`eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*`),
	regexp.MustCompile(`-----BEGIN [A-Z0-9 ]+-----[\s\S]*?(-----END [A-Z0-9 ]+-----|$)`),
	regexp.MustCompile(`(?i)((client-key-data|client-certificate-data|certificate-authority-data|token|password|id-token|refresh-token|access-token|client-secret)["']?\s*[:=]\s*["']?)[^\s"',}]+`),
}

// longBase64 matches long base64 runs; only runs mixing upper and lower case
// are redacted, so that hex digests such as container IDs stay readable.
var longBase64 = regexp.MustCompile(`[A-Za-z0-9+/]{64,}={0,2}`)

// Redact removes anything that looks like a token, key or certificate from
// s. labrun runs it over every error text that may echo configuration or
// request data, because lab output is shared (CI logs, screenshots) and a
// leaked cluster credential is worse than a less precise message.
func Redact(s string) string {
	for i, re := range secretPatterns {
		if i == 3 {
			s = re.ReplaceAllString(s, "${1}"+redacted)
			continue
		}
		s = re.ReplaceAllString(s, redacted)
	}
	return longBase64.ReplaceAllStringFunc(s, func(m string) string {
		if strings.ToLower(m) == m || strings.ToUpper(m) == m {
			return m
		}
		return redacted
	})
}

// redactWith scrubs the exact secret values first (they may be short or
// oddly shaped, e.g. a static token "abc123"), then the generic patterns.
func redactWith(s string, secrets []string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, redacted)
		}
	}
	return Redact(s)
}

// redactedError keeps the error chain (errors.Is/As still work, e.g.
// apierrors.IsNotFound) while its text is scrubbed.
type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// scrub returns err with a redacted message, or err itself when nothing
// needed redacting.
func (c *Client) scrub(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := redactWith(msg, c.secrets.list())
	if clean == msg {
		return err
	}
	return &redactedError{msg: clean, err: err}
}

// secretSet holds credential values behind a pointer, so that printing a
// Client (even with %#v) shows an address, never the values.
type secretSet struct {
	values []string
}

func (s *secretSet) list() []string {
	if s == nil {
		return nil
	}
	return s.values
}

// String keeps the values out of any formatted output.
func (s *secretSet) String() string { return redacted }
