package secret

import "testing"

func TestName(t *testing.T) {
	for name, want := range map[string]bool{
		"API_TOKEN": true, "githubToken": true, "DB_PASSWORD": true, "passwd": true,
		"client_secret": true, "AWS_CREDENTIALS": true, "privateKey": true,
		"API_KEY": true, "apiKey": true, "key": true, "ssh-keys": true,
		"KEYBOARD": false, "monkey": false, "keyspace": false, "out": false, "user": false,
	} {
		if got := Name(name); got != want {
			t.Errorf("Name(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactor(t *testing.T) {
	var r Redactor
	if got := r.String("nothing yet"); got != "nothing yet" {
		t.Errorf("empty redactor changed %q", got)
	}
	r.Add("")
	r.Add(`a"b<c d`)
	r.Add("ab")
	for in, want := range map[string]string{
		`x a"b<c d y`:           "x [REDACTED] y",
		`"a\"b<c d"`:            `"[REDACTED]"`,
		`"a\"b\u003cc d"`:       `"[REDACTED]"`,
		`?q=a%22b%3Cc+d`:        `?q=[REDACTED]`,
		`a&#34;b&lt;c d`:        `[REDACTED]`,
		`"\"a\\\"b\u003cc d\""`: `"\"[REDACTED]\""`,
		"ab abc":                "[REDACTED] [REDACTED]c",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}

// Printers escape control characters before the redacting writer sees
// their text (the console, a platform's verdict): a secret holding one is
// redacted in that form too.
func TestRedactorEscapedForms(t *testing.T) {
	var r Redactor
	r.Add("s\x1b[2J\u202e\nt")
	for _, in := range []string{`x s\u001b[2J\u202e` + "\n" + `t y`, `x s\u001b[2J\u202e\nt y`} {
		if got, want := r.String(in), "x [REDACTED] y"; got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
