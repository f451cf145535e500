package parse

import "testing"

func TestCurlCaptures(t *testing.T) {
	ok, err := ParseCurl(input(t, "local/curl-w/kv-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "code", ok.HTTPCode, 200)
	eq(t, "exit", ok.ExitCode, 0)
	eq(t, "has exit", ok.HasExitCode, true)
	eq(t, "remote", ok.RemoteIP+":"+itoa(ok.RemotePort), "127.0.0.1:8080")
	if ok.TimeTotal <= 0 || ok.TimeTotal > 5 {
		t.Errorf("time_total %v", ok.TimeTotal)
	}
	refused, err := ParseCurl(input(t, "local/curl-w/kv-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "000 is 0", refused.HTTPCode, 0)
	eq(t, "exit 7", refused.ExitCode, 7)
	eq(t, "message", refused.ErrorMsg, "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server")
	timeout, err := ParseCurl(input(t, "local/curl-w/kv-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "exit 28", timeout.ExitCode, 28)
	if timeout.TimeTotal < 1 {
		t.Errorf("timeout took %v s", timeout.TimeTotal)
	}

	js, err := ParseCurl(input(t, "local/curl-w/json-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json code", js.HTTPCode, 200)
	eq(t, "json url", js.URL, "http://127.0.0.1:8080/")
	eq(t, "json local ip", js.LocalIP, "127.0.0.1")
	eq(t, "json connects", js.NumConnects, 1)
	eq(t, "json raw", js.Fields["method"], "GET")
	jr, err := ParseCurl(input(t, "local/curl-w/json-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json exit", jr.ExitCode, 7)
	eq(t, "json null", jr.Fields["content_type"], "")
}

func TestCurlErrors(t *testing.T) {
	_, err := ParseCurl("")
	wantError(t, err, kindCurl, 0, "empty input")
	_, err = ParseCurl("<html>hello</html>\nhttp_code=200\n")
	wantError(t, err, kindCurl, 1, "name=value")
	_, err = ParseCurl("http_code=abc\n")
	wantError(t, err, kindCurl, 0, "http_code: expected an integer")
	_, err = ParseCurl("time_total=fast\n")
	wantError(t, err, kindCurl, 0, "time_total: expected seconds")
	c, err := ParseCurl("http_code=200\nmy_note=x=y\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "unknown name kept", c.Fields["my_note"], "x=y")
	eq(t, "no exitcode printed", c.HasExitCode, false)
}
