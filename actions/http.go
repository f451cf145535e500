package actions

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/labrun/labrun/internal/lang/diag"
	"github.com/labrun/labrun/internal/lang/eval"
)

// HTTPSpec is one HTTP request made by labrun itself, from the machine it
// runs on: on a lab's node, the node's own view of NodePorts and
// ClusterIPs; on a test cluster, an outside client's.
type HTTPSpec struct {
	URL             string            `yaml:"url" required:"true" doc:"http:// or https:// URL; an IPv6 host is bracketed (joinHostPort does that)."`
	Method          string            `yaml:"method" doc:"Request method (default GET)."`
	Headers         map[string]string `yaml:"headers" doc:"Request headers; Host sets the virtual host."`
	Body            string            `yaml:"body" doc:"Request body text."`
	JSON            any               `yaml:"json" doc:"Request body encoded as JSON; Content-Type becomes application/json unless headers set it."`
	Timeout         time.Duration     `yaml:"timeout" doc:"Limit for one request, from connecting to the body's last byte (default 10s). With until, each attempt has this limit."`
	FollowRedirects bool              `yaml:"followRedirects" doc:"Follow up to 10 redirects, as curl -L does; by default a 3xx response is the result."`
	UnixSocket      string            `yaml:"unixSocket" doc:"Connect to this Unix socket instead of the URL's host, as curl --unix-socket; the URL still gives the path. E.g. the Cilium agent's API on its node: /var/run/cilium/cilium.sock with url http://localhost/v1/healthz."`
	CAFile          string            `yaml:"caFile" doc:"PEM file of the CA certificates that verify an https server (default: the system's)."`
	Insecure        bool              `yaml:"insecure" doc:"Do not verify the server's certificate, as curl -k."`
	AllowFailure    bool              `yaml:"allowFailure" doc:"A request that gets no response (refused, reset, timed out) is a result with status 0 and error set, instead of a step failure."`
	Mutates         bool              `yaml:"mutates" doc:"The request changes the system: labrun check skips the step and until may not repeat it."`
}

// HTTPResult is the response. A status of 400 or more is a result like any
// other: assertions and until decide what is expected.
type HTTPResult struct {
	// Method is the request's method, as sent: the spec's method, GET
	// when it names none (always GET for the agent action).
	Method string `json:"method" expr:"method"`
	// URL is the one the response came from (the last one when redirects
	// were followed).
	URL string `json:"url" expr:"url"`
	// Status is the response's status code (200, 404, ...); 0 when no
	// response came.
	Status int `json:"status" expr:"status"`
	// Proto is the response's protocol, "HTTP/1.1" or "HTTP/2.0"; ""
	// when no response came.
	Proto string `json:"proto" expr:"proto"`
	// Headers has canonical names ("Content-Type"); a repeated header's
	// values are joined with ", ", as HTTP allows.
	Headers map[string]string `json:"headers" expr:"headers"`
	// Body is the whole response body as text (at most 256 MiB); ""
	// when there was none or no response came.
	Body string `json:"body" expr:"body"`
	// JSON is the body decoded when the response says it is JSON
	// (application/json or a +json type); null otherwise, and for an
	// empty body.
	JSON any `json:"json" expr:"json" nullable:"true"`
	// Seconds is the time from sending the request to the body's last
	// byte (or to the failure), redirects included.
	Seconds float64 `json:"seconds" expr:"seconds"`
	// Error says why no response came, for a step with allowFailure;
	// "" when one came.
	Error string `json:"error" expr:"error"`
}

// defaultHTTPTimeout bounds a request that names no timeout, so that a
// server that accepts and never answers cannot hold a lab forever.
const defaultHTTPTimeout = 10 * time.Second

func init() {
	Register(Def[HTTPSpec, HTTPResult]{
		Name:       "http",
		Cost:       RoundTrip,
		Doc:        "Make an HTTP request from labrun's machine (a new connection each time, no proxy) and capture status, headers, body, its JSON and the time taken.",
		Run:        httpRequest,
		MutatesKey: "mutates",
		Check:      checkHTTP,
		Host:       httpHost,
	})
}

// httpHost: the request leaves from the machine labrun runs on, so what
// it reaches is what that machine's network reaches; through a Unix
// socket, the socket must be a file there.
func httpHost(spec *HTTPSpec, hc *HostContext) []HostNeed {
	switch {
	case hc.Unknown("unixSocket"):
		return []HostNeed{{
			What:  "a Unix socket known only when the step runs",
			InPod: "a hostPath volume of the socket's directory on the node, mounted at the same path, and a user the socket admits",
		}}
	case spec.UnixSocket != "":
		dir := hostPathOf(spec.UnixSocket)
		return []HostNeed{{
			What:  "the Unix socket " + spec.UnixSocket,
			InPod: "a hostPath volume of the node's " + dir + " mounted at " + dir + ", and a user the socket admits",
		}}
	}
	where := "a URL known only when the step runs"
	if u, err := url.Parse(spec.URL); !hc.Unknown("url") && err == nil && u.Host != "" {
		where = u.Scheme + "://" + u.Host
	}
	return []HostNeed{{
		What:  "a network path from the machine labrun runs on to " + where,
		InPod: "the pod's network must reach it; localhost is the pod's own, not the node's, unless the pod has hostNetwork: true",
	}}
}

// checkHTTP finds at validate time what the request cannot do: a URL
// that is not http(s), a body given twice, a method with spaces.
func checkHTTP(spec *eval.Value, sc *StaticContext) diag.List {
	errs := atMostOne(spec, "body", "json")
	if u, raw, ok := literalString(spec, "url"); ok {
		if err := checkURL(raw); err != nil {
			errs.Add(u.Pos, "%v", err)
		}
	}
	if m, method, ok := literalString(spec, "method"); ok && !validMethod(method) {
		errs.Add(m.Pos, "method %q is not an HTTP method token (e.g. GET, POST)", method)
	}
	return errs
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("url %q: %w", s, errors.Unwrap(err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url %q: expected an http:// or https:// URL", s)
	}
	if u.Host == "" {
		return fmt.Errorf("url %q has no host", s)
	}
	return nil
}

// validMethod accepts an RFC 9110 token, as net/http does.
func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for _, r := range m {
		if r <= ' ' || r >= 0x7f || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

func httpRequest(ctx context.Context, rt *Runtime, spec *HTTPSpec) (*HTTPResult, error) {
	if err := checkURL(spec.URL); err != nil {
		return nil, err
	}
	method := spec.Method
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		return nil, fmt.Errorf("method %q is not an HTTP method token", method)
	}
	body, contentType, err := requestBody(spec)
	if err != nil {
		return nil, err
	}
	client, err := httpClient(spec)
	if err != nil {
		return nil, err
	}
	timeout := spec.Timeout
	if timeout <= 0 {
		timeout = defaultHTTPTimeout
	}
	reqCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(reqCtx, method, spec.URL, body)
	if err != nil {
		return nil, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("User-Agent", "labrun")
	for k, v := range spec.Headers {
		if strings.EqualFold(k, "Host") {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}

	res := &HTTPResult{Method: method, URL: spec.URL, Headers: map[string]string{}}
	start := time.Now()
	resp, err := client.Do(req)
	if err == nil {
		err = readResponse(resp, res)
	}
	res.Seconds = time.Since(start).Seconds()
	if err == nil {
		return res, nil
	}
	if ctx.Err() != nil {
		return res, ctx.Err() // interrupted, or the step's own time is up
	}
	err = describeHTTPError(reqCtx, method, spec.URL, timeout, err)
	if spec.AllowFailure && res.Status == 0 {
		res.Error = err.Error()
		return res, nil
	}
	return res, err
}

// requestBody returns the body to send and the Content-Type it implies.
func requestBody(spec *HTTPSpec) (io.Reader, string, error) {
	switch {
	case spec.JSON != nil:
		b, err := json.Marshal(spec.JSON)
		if err != nil {
			return nil, "", fmt.Errorf("json: %w", err)
		}
		return bytes.NewReader(b), "application/json", nil
	case spec.Body != "":
		return strings.NewReader(spec.Body), "", nil
	}
	return nil, "", nil
}

// httpClient builds a client for one request. Each request opens its own
// connection, as curl does: a lab that asks which backend answers wants
// the load balancer to choose again every time, not a kept-alive
// connection to the first one. No proxy is used, whatever the
// environment says: the request is the lab's own traffic to its own
// machines.
func httpClient(spec *HTTPSpec) (*http.Client, error) {
	tlsConf := &tls.Config{InsecureSkipVerify: spec.Insecure}
	if spec.CAFile != "" {
		pem, err := os.ReadFile(spec.CAFile)
		if err != nil {
			return nil, fmt.Errorf("caFile: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("caFile %s holds no PEM certificate", spec.CAFile)
		}
		tlsConf.RootCAs = pool
	}
	dial := (&net.Dialer{}).DialContext
	if spec.UnixSocket != "" {
		// Unix sockets are how node agents (Cilium's, containerd's)
		// serve their APIs; the URL's host only fills the Host header.
		dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", spec.UnixSocket)
		}
	}
	transport := &http.Transport{
		Proxy:             nil,
		DialContext:       dial,
		TLSClientConfig:   tlsConf,
		DisableKeepAlives: true,
		ForceAttemptHTTP2: true,
	}
	client := &http.Client{Transport: transport}
	if !spec.FollowRedirects {
		client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return client, nil
}

// readResponse fills res from resp and closes its body.
func readResponse(resp *http.Response, res *HTTPResult) error {
	defer resp.Body.Close()
	res.Status = resp.StatusCode
	res.Proto = resp.Proto
	res.URL = resp.Request.URL.String()
	for k, vs := range resp.Header {
		res.Headers[k] = strings.Join(vs, ", ")
	}
	var body limitedBuffer
	if _, err := io.Copy(&body, resp.Body); err != nil {
		return fmt.Errorf("reading the body: %w", err)
	}
	if body.over {
		return fmt.Errorf("the response body is larger than %d MiB", maxOutput>>20)
	}
	res.Body = body.String()
	if isJSON(resp.Header.Get("Content-Type")) && len(bytes.TrimSpace(body.Bytes())) > 0 {
		if err := json.Unmarshal(body.Bytes(), &res.JSON); err != nil {
			return fmt.Errorf("the response says it is JSON (%s) but is not: %w", resp.Header.Get("Content-Type"), err)
		}
	}
	return nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// describeHTTPError turns a client error into one line that names the
// request, and for a timeout the limit that ran out.
func describeHTTPError(reqCtx context.Context, method, rawURL string, timeout time.Duration, err error) error {
	if errors.Is(err, context.DeadlineExceeded) || reqCtx.Err() != nil {
		return fmt.Errorf("%s %s: no complete response within %s", method, rawURL, timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	// Not wrapped: a service that does not answer a lab's request is a
	// wrong answer (the learner's Service), not the cluster's API down,
	// which is what a wrapped net error would be classed as.
	return fmt.Errorf("%s %s: %v", method, rawURL, err)
}
