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

// Curl is what curl's -w printed.
type Curl struct {
	// HTTPCode is the HTTP status; 0 when curl got no response (it prints
	// "000").
	HTTPCode  int     `json:"httpCode" expr:"httpCode"`
	TimeTotal float64 `json:"timeTotal" expr:"timeTotal"` // seconds
	// ExitCode is %{exitcode} (curl 7.75+): 0 on success, 7 couldn't
	// connect, 28 timed out, ... HasExitCode tells whether it was printed;
	// otherwise take the exit status of the curl process.
	ExitCode          int     `json:"exitCode" expr:"exitCode"`
	HasExitCode       bool    `json:"hasExitCode" expr:"hasExitCode"`
	ErrorMsg          string  `json:"errorMsg" expr:"errorMsg"`
	RemoteIP          string  `json:"remoteIP" expr:"remoteIP"`
	RemotePort        int     `json:"remotePort" expr:"remotePort"`
	LocalIP           string  `json:"localIP" expr:"localIP"`
	LocalPort         int     `json:"localPort" expr:"localPort"`
	URL               string  `json:"url" expr:"url"` // url_effective, else url
	TimeNamelookup    float64 `json:"timeNamelookup" expr:"timeNamelookup"`
	TimeConnect       float64 `json:"timeConnect" expr:"timeConnect"`
	TimeStarttransfer float64 `json:"timeStarttransfer" expr:"timeStarttransfer"`
	SizeDownload      int64   `json:"sizeDownload" expr:"sizeDownload"`
	NumConnects       int     `json:"numConnects" expr:"numConnects"`
	// Fields holds every variable printed, as text, under curl's own name
	// ("http_code" -> "200"), typed above or not.
	Fields map[string]string `json:"fields" expr:"fields"`
}

// ParseCurl parses curl's -w output: the JSON object of -w '%{json}', or
// "name=value" lines (see CurlWriteOut) where name is a curl write-out
// variable name. Unknown names are kept in Fields only; a line that is not
// name=value is an error (usually the response body, when -o was
// forgotten).
func ParseCurl(text string) (Curl, error) {
	c := Curl{Fields: map[string]string{}}
	t := strings.TrimSpace(text)
	if t == "" {
		return Curl{}, newError(kindCurl, 0, "", "empty input; did curl run with -w?")
	}
	if strings.HasPrefix(t, "{") {
		var raw map[string]any
		dec := json.NewDecoder(strings.NewReader(t))
		dec.UseNumber()
		if err := dec.Decode(&raw); err != nil {
			return Curl{}, jsonError(kindCurl, text, err)
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
	} else {
		r := newLineReader(text)
		for {
			line, ok := r.next()
			if !ok {
				break
			}
			if isBlank(line) {
				continue
			}
			k, v, ok := strings.Cut(line, "=")
			if !ok || !isCurlVarName(k) {
				return Curl{}, newError(kindCurl, r.num, line, `expected "name=value" with a curl write-out variable name`)
			}
			c.Fields[k] = strings.TrimRight(v, " \t")
		}
	}
	if err := c.fill(); err != nil {
		return Curl{}, newError(kindCurl, 0, "", err.Error())
	}
	return c, nil
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

// fill sets the typed fields from Fields.
func (c *Curl) fill() error {
	ints := []struct {
		name string
		dst  *int
	}{
		{"http_code", &c.HTTPCode}, {"remote_port", &c.RemotePort}, {"local_port", &c.LocalPort},
		{"num_connects", &c.NumConnects},
	}
	for _, x := range ints {
		if v, ok := c.Fields[x.name]; ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return errString(x.name + ": expected an integer, got " + strconv.Quote(shortToken(v)))
			}
			*x.dst = n
		}
	}
	if v, ok := c.Fields["exitcode"]; ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errString("exitcode: expected an integer, got " + strconv.Quote(shortToken(v)))
		}
		c.ExitCode, c.HasExitCode = n, true
	}
	floats := []struct {
		name string
		dst  *float64
	}{
		{"time_total", &c.TimeTotal}, {"time_namelookup", &c.TimeNamelookup},
		{"time_connect", &c.TimeConnect}, {"time_starttransfer", &c.TimeStarttransfer},
	}
	for _, x := range floats {
		if v, ok := c.Fields[x.name]; ok && v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return errString(x.name + ": expected seconds, got " + strconv.Quote(shortToken(v)))
			}
			*x.dst = f
		}
	}
	if v, ok := c.Fields["size_download"]; ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return errString("size_download: expected an integer")
		}
		c.SizeDownload = n
	}
	c.ErrorMsg = c.Fields["errormsg"]
	c.RemoteIP = c.Fields["remote_ip"]
	c.LocalIP = c.Fields["local_ip"]
	c.URL = c.Fields["url_effective"]
	if c.URL == "" {
		c.URL = c.Fields["url"]
	}
	return nil
}
