package parse

import "testing"

func TestCurlCaptures(t *testing.T) {
	ok, err := ParseCurl(input(t, "local/curl-w/kv-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "code", deref(ok.HTTPCode), 200)
	eq(t, "exit", deref(ok.ExitCode), 0)
	eq(t, "has exit", ok.HasExitCode, true)
	eq(t, "remote", *ok.RemoteIP+":"+itoa(*ok.RemotePort), "127.0.0.1:8080")
	if ok.TimeTotal == nil || *ok.TimeTotal <= 0 || *ok.TimeTotal > 5 {
		t.Errorf("time_total %v", deref(ok.TimeTotal))
	}
	refused, err := ParseCurl(input(t, "local/curl-w/kv-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "000 is 0", deref(refused.HTTPCode), 0)
	eq(t, "exit 7", deref(refused.ExitCode), 7)
	eq(t, "message", deref(refused.ErrorMsg), "Failed to connect to 127.0.0.1 port 9 after 0 ms: Couldn't connect to server")
	timeout, err := ParseCurl(input(t, "local/curl-w/kv-timeout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "exit 28", deref(timeout.ExitCode), 28)
	if timeout.TimeTotal == nil || *timeout.TimeTotal < 1 {
		t.Errorf("timeout took %v s", deref(timeout.TimeTotal))
	}

	js, err := ParseCurl(input(t, "local/curl-w/json-200.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json code", deref(js.HTTPCode), 200)
	eq(t, "json url", deref(js.URL), "http://127.0.0.1:8080/")
	eq(t, "json local ip", deref(js.LocalIP), "127.0.0.1")
	eq(t, "json connects", deref(js.NumConnects), 1)
	eq(t, "json raw", js.Fields["method"], "GET")
	jr, err := ParseCurl(input(t, "local/curl-w/json-refused.txt"))
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "json exit", deref(jr.ExitCode), 7)
	eq(t, "json null", jr.Fields["content_type"], "")
}

func TestCurlErrors(t *testing.T) {
	_, err := ParseCurl("")
	wantError(t, err, kindCurl, 0, "empty input")
	_, err = ParseCurl("<html>hello</html>\nhttp_code=200\n")
	wantError(t, err, kindCurl, 1, "\"name=value\"")
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

func TestCurlCodeTimeAndStderr(t *testing.T) {
	// -w '%{http_code} %{time_total}', stdout and stderr captured together:
	// curl's error line follows on the same line (-w printed no newline).
	c, err := ParseCurl("000 0.000512curl: (7) Failed to connect to 10.43.7.7 port 80 after 0 ms: Couldn't connect to server\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "code", deref(c.HTTPCode), 0)
	eq(t, "time", deref(c.TimeTotal), 0.000512)
	eq(t, "exit from stderr", deref(c.ExitCode), 7)
	eq(t, "has exit", c.HasExitCode, true)
	eq(t, "message", deref(c.ErrorMsg), "Failed to connect to 10.43.7.7 port 80 after 0 ms: Couldn't connect to server")
	eq(t, "fields only hold -w output", c.Fields, map[string]string{"http_code": "000", "time_total": "0.000512"})

	ok, err := ParseCurl("200 0.004211")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "200", []any{deref(ok.HTTPCode), deref(ok.TimeTotal), ok.HasExitCode}, []any{200, 0.004211, false})

	to, err := ParseCurl("000 5.001234\ncurl: (28) Connection timed out after 5001 milliseconds\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "timeout", []any{deref(to.ExitCode), deref(to.TimeTotal)}, []any{28, 5.001234})

	// -w's own exitcode wins over the stderr line.
	both, err := ParseCurl("exitcode=7\nerrormsg=from -w\ncurl: (28) other\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "-w wins", []any{deref(both.ExitCode), deref(both.ErrorMsg)}, []any{7, "from -w"})

	_, err = ParseCurl("200 fast\n")
	wantError(t, err, kindCurl, 1, "CODE SECONDS")
	_, err = ParseCurl("curl: (x) broken\n")
	wantError(t, err, kindCurl, 1, "curl: (N) message")
}

func TestCurlJSONThenStderr(t *testing.T) {
	c, err := ParseCurl(`{"http_code":0,"errormsg":"see curl: (7) inside","time_total":0.1}curl: (7) Failed to connect` + "\n")
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "exit from stderr", deref(c.ExitCode), 7)
	eq(t, "json message kept", deref(c.ErrorMsg), "see curl: (7) inside")
}
