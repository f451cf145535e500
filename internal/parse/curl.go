package parse

import (
	"encoding/json"
	"strconv"
	"strings"
)

const kindCurl = "curl-w"

// CurlWriteOut is the write-out format ParseCurl reads best: one
// "name=value" line per curl variable, named exactly like the variable.
// Use it as
//
//	curl -s -o /dev/null --connect-timeout 5 -w "$FORMAT" URL
//
// (-o /dev/null keeps the response body out of stdout). '%{json}' works too.
const CurlWriteOut = `http_code=%{http_code}\ntime_total=%{time_total}\nexitcode=%{exitcode}\nremote_ip=%{remote_ip}\nremote_port=%{remote_port}\nerrormsg=%{errormsg}\n`

// Curl is what curl's -w printed (and, if captured with it, curl's error
// line on stderr).
//
// The typed numbers are null when curl did not print them (the write-out
// format did not ask for them), never a 0 nobody printed; Fields has the
// text of everything printed.
type Curl struct {
	// HTTPCode is %{http_code}, the HTTP status of the last response; 0
	// when curl got no response (it prints "000"); null when -w did not
	// print it.
	HTTPCode *int `json:"httpCode" expr:"httpCode"`
	// TimeTotal is %{time_total}, seconds from start to the end of the
	// transfer (or to the failure); null when -w did not print it.
	TimeTotal *float64 `json:"timeTotal" expr:"timeTotal"`
	// ExitCode is %{exitcode} (curl 7.75+) or, when -w printed none, the
	// code of curl's last "curl: (N)" line or kubectl's "command
	// terminated with exit code N": 0 on success, 7 couldn't connect, 28
	// timed out, ... null when none of them was printed: then take the
	// exit status of the curl process. HasExitCode is ExitCode != null.
	ExitCode    *int `json:"exitCode" expr:"exitCode"`
	HasExitCode bool `json:"hasExitCode" expr:"hasExitCode"`
	// ErrorMsg is %{errormsg} (curl 7.75+), or the message of the last
	// "curl: (N) message" line when -w printed none or printed it empty;
	// "" when -w printed it empty (success) and no such line followed;
	// null when neither printed one.
	ErrorMsg *string `json:"errorMsg" expr:"errorMsg"`
	// RemoteIP is %{remote_ip}, the address curl connected to last; ""
	// when it connected nowhere (printed empty); null when -w did not
	// print it.
	RemoteIP *string `json:"remoteIP" expr:"remoteIP"`
	// RemotePort is %{remote_port}; null when -w did not print it or
	// printed it empty.
	RemotePort *int `json:"remotePort" expr:"remotePort"`
	// LocalIP is %{local_ip}, the source address of curl's last
	// connection; "" when there was none (printed empty); null when -w
	// did not print it.
	LocalIP *string `json:"localIP" expr:"localIP"`
	// LocalPort is %{local_port}, the source port of that connection;
	// null when -w did not print it or printed it empty.
	LocalPort *int `json:"localPort" expr:"localPort"`
	// URL is %{url_effective} (the last URL after redirects), else %{url};
	// null when -w printed neither.
	URL *string `json:"url" expr:"url"`
	// TimeNamelookup, TimeConnect and TimeStarttransfer are
	// %{time_namelookup}, %{time_connect} and %{time_starttransfer}:
	// seconds from the start until the name was resolved, the TCP
	// connection was made and the first response byte came; null when -w
	// did not print them.
	TimeNamelookup    *float64 `json:"timeNamelookup" expr:"timeNamelookup"`
	TimeConnect       *float64 `json:"timeConnect" expr:"timeConnect"`
	TimeStarttransfer *float64 `json:"timeStarttransfer" expr:"timeStarttransfer"`
	// SizeDownload is %{size_download}, the bytes of body received; null
	// when -w did not print it.
	SizeDownload *int64 `json:"sizeDownload" expr:"sizeDownload"`
	// NumConnects is %{num_connects}, the new connections curl made (0
	// when it reused one or none succeeded); null when -w did not print
	// it.
	NumConnects *int `json:"numConnects" expr:"numConnects"`
	// Fields holds every variable printed, as text, under curl's own name
	// ("http_code" -> "200"), typed above or not.
	Fields map[string]string `json:"fields" expr:"fields"`
	// Errors are all the "curl: (N) message" lines, in printed order
	// (one per failed URL or retry); ExitCode and ErrorMsg come from the
	// last when -w printed none.
	Errors []CurlError `json:"errors" expr:"errors"`
}

// CurlError is one "curl: (N) message" line.
type CurlError struct {
	// Code is N, curl's exit code for this failure (6 could not resolve,
	// 7 could not connect, 28 timed out, ...).
	Code int `json:"code" expr:"code"`
	// Message is the text after "(N) ", trimmed.
	Message string `json:"message" expr:"message"`
}

// ParseCurl parses what curl printed for -w, in one of three conventions:
//
//   - name=value lines, name being the curl variable (see CurlWriteOut);
//     unknown names are kept in Fields only;
//   - the JSON object of -w '%{json}';
//   - the two-value line of -w '%{http_code} %{time_total}' ("200 0.0123").
//
// With -sS, curl's error line "curl: (7) Failed to connect ..." goes to
// stderr; when stdout and stderr were captured together it follows the -w
// output, often on the same line because -w printed no newline. Such a line
// sets ExitCode and ErrorMsg unless -w printed them; so does kubectl exec's
// "command terminated with exit code N". Any other line is an error
// (usually the response body, when -o was forgotten).
func ParseCurl(text string) (Curl, error) {
	c := Curl{Fields: map[string]string{}, Errors: []CurlError{}}
	t := strings.TrimSpace(text)
	if t == "" {
		return Curl{}, newError(kindCurl, 0, "", "empty input; did curl run with -w?")
	}
	var stderrCode int
	var stderrMsg string
	var err error
	if strings.HasPrefix(t, "{") {
		stderrCode, stderrMsg, err = c.readJSON(text, t)
	} else {
		stderrCode, stderrMsg, err = c.readLines(text)
	}
	if err != nil {
		return Curl{}, err
	}
	if err := c.fill(); err != nil {
		return Curl{}, newError(kindCurl, 0, "", err.Error())
	}
	if stderrCode >= 0 && !c.HasExitCode {
		c.ExitCode, c.HasExitCode = &stderrCode, true
	}
	if stderrMsg != "" && (c.ErrorMsg == nil || *c.ErrorMsg == "") {
		c.ErrorMsg = &stderrMsg
	}
	return c, nil
}

// readJSON reads the object of -w '%{json}' (t is text trimmed) into
// c.Fields, every value as its text, and the curl error lines that may
// follow it into c.Errors. It returns the exit code and message of the
// last of them (-1 and "" when there is none).
func (c *Curl) readJSON(text, t string) (stderrCode int, stderrMsg string, err error) {
	stderrCode = -1
	body := t
	if end := strings.LastIndexByte(t, '}'); end >= 0 {
		if i := strings.Index(t[end:], "curl: ("); i >= 0 {
			body = t[:end+i]
			for _, line := range strings.Split(t[end+i:], "\n") {
				if code, msg, ok := parseCurlError(strings.TrimSpace(line)); ok {
					stderrCode, stderrMsg = code, msg
					c.Errors = append(c.Errors, CurlError{Code: code, Message: msg})
				}
			}
		}
	}
	var raw map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return 0, "", jsonError(kindCurl, text, err)
	}
	for k, v := range raw {
		switch x := v.(type) {
		case nil:
			c.Fields[k] = ""
		case string:
			c.Fields[k] = x
		case json.Number:
			c.Fields[k] = x.String()
		case bool:
			c.Fields[k] = strconv.FormatBool(x)
		default:
			b, _ := json.Marshal(x)
			c.Fields[k] = string(b)
		}
	}
	return stderrCode, stderrMsg, nil
}

// readLines reads name=value lines or the "CODE SECONDS" line into
// c.Fields, curl's error lines into c.Errors, and kubectl exec's "command
// terminated with exit code N". It returns the exit code and message that
// stderr gave (-1 and "" when it gave none): a curl error line's, else
// kubectl's code.
func (c *Curl) readLines(text string) (stderrCode int, stderrMsg string, err error) {
	stderrCode = -1
	r := newLineReader(text)
	for {
		line, ok := r.next()
		if !ok {
			return stderrCode, stderrMsg, nil
		}
		cut := r.pos == len(text) && !strings.HasSuffix(text, "\n")
		if i := strings.Index(line, "curl: ("); i >= 0 {
			code, msg, ok := parseCurlError(line[i:])
			if cut {
				// curl ends its error line with a newline: without
				// one, the message and maybe the code were cut.
				return 0, "", truncatedError(kindCurl, r.num, line, `"curl: (N) message" line ends without its newline (truncated)`)
			}
			if !ok {
				return 0, "", newError(kindCurl, r.num, line, `expected "curl: (N) message"`)
			}
			stderrCode, stderrMsg = code, msg
			c.Errors = append(c.Errors, CurlError{Code: code, Message: msg})
			line = line[:i]
		}
		if isBlank(line) {
			continue
		}
		// kubectl exec's own note on stderr after a failed command.
		if n, ok := strings.CutPrefix(line, "command terminated with exit code "); ok {
			code, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				return 0, "", newError(kindCurl, r.num, line, `expected "command terminated with exit code N"`)
			}
			if stderrCode < 0 {
				stderrCode = code
			}
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && isCurlVarName(k) {
			c.Fields[k] = strings.TrimRight(v, " \t")
			continue
		}
		if code, secs, ok := parseCodeTime(line); ok {
			c.Fields["http_code"] = code
			if secs != "" {
				c.Fields["time_total"] = secs
			}
			continue
		}
		const want = `expected "name=value", "CODE SECONDS" or "curl: (N) message"`
		if cut {
			return 0, "", truncatedError(kindCurl, r.num, line, want+" (the output ends in this line, without a newline: truncated?)")
		}
		return 0, "", newError(kindCurl, r.num, line, want)
	}
}

// parseCurlError reads curl's stderr line "curl: (7) Failed to connect ...".
func parseCurlError(s string) (int, string, bool) {
	rest, ok := strings.CutPrefix(s, "curl: (")
	if !ok {
		return 0, "", false
	}
	num, msg, ok := strings.Cut(rest, ")")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return 0, "", false
	}
	return n, strings.TrimSpace(msg), true
}

// parseCodeTime reads the line of -w '%{http_code} %{time_total}' (the
// time is optional): a 3-digit code, then seconds.
func parseCodeTime(line string) (code, secs string, ok bool) {
	f := strings.Fields(line)
	if len(f) == 0 || len(f) > 2 || len(f[0]) != 3 {
		return "", "", false
	}
	if _, err := strconv.Atoi(f[0]); err != nil {
		return "", "", false
	}
	if len(f) == 2 {
		if _, err := strconv.ParseFloat(f[1], 64); err != nil {
			return "", "", false
		}
		secs = f[1]
	}
	return f[0], secs, true
}

func isCurlVarName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// fill sets the typed fields from Fields; a variable not printed, or
// printed empty, stays null.
func (c *Curl) fill() error {
	for _, x := range []struct {
		name string
		dst  **int
	}{
		{"http_code", &c.HTTPCode}, {"remote_port", &c.RemotePort}, {"local_port", &c.LocalPort},
		{"num_connects", &c.NumConnects}, {"exitcode", &c.ExitCode},
	} {
		if v := c.Fields[x.name]; v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errString(x.name + ": expected an integer, got " + strconv.Quote(shortToken(v)))
			}
			*x.dst = &n
		}
	}
	c.HasExitCode = c.ExitCode != nil
	for _, x := range []struct {
		name string
		dst  **float64
	}{
		{"time_total", &c.TimeTotal}, {"time_namelookup", &c.TimeNamelookup},
		{"time_connect", &c.TimeConnect}, {"time_starttransfer", &c.TimeStarttransfer},
	} {
		if v := c.Fields[x.name]; v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return errString(x.name + ": expected seconds, got " + strconv.Quote(shortToken(v)))
			}
			*x.dst = &f
		}
	}
	if v := c.Fields["size_download"]; v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errString("size_download: expected an integer")
		}
		c.SizeDownload = &n
	}
	c.ErrorMsg = c.printed("errormsg")
	c.RemoteIP = c.printed("remote_ip")
	c.LocalIP = c.printed("local_ip")
	c.URL = c.printed("url_effective")
	if c.URL == nil || *c.URL == "" {
		if u := c.printed("url"); u != nil {
			c.URL = u
		}
	}
	return nil
}

// printed is the text of the variable name as -w printed it ("" when
// printed empty), or null when -w did not print it.
func (c *Curl) printed(name string) *string {
	if v, ok := c.Fields[name]; ok {
		return &v
	}
	return nil
}
