package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// conn is one load client's own keep-alive HTTPS connection. The load loop writes its
// requests directly and reads responses with net/http's parser, without a Transport's
// connection pool and per-connection goroutines: the load generator shares the machine
// with the server it measures, so every microsecond it spends is taken from the server.
type conn struct {
	a        *api
	host     string // host:port to dial
	hostHdr  string // Host header
	basePath string
	c        *tls.Conn
	br       *bufio.Reader
	bw       *bufio.Writer
	body     bytes.Buffer
}

func newConn(a *api) (*conn, error) {
	u, err := url.Parse(a.base)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("server %s: only https is supported", a.base)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	return &conn{a: a, host: host, hostHdr: u.Host, basePath: u.Path}, nil
}

func (c *conn) dial() error {
	cfg := c.a.tls.Clone()
	if cfg.ServerName == "" {
		h, _, _ := net.SplitHostPort(c.host)
		cfg.ServerName = h
	}
	cfg.NextProtos = []string{"http/1.1"}
	tc, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", c.host, cfg)
	if err != nil {
		return err
	}
	c.c, c.br, c.bw = tc, bufio.NewReaderSize(tc, 16<<10), bufio.NewWriterSize(tc, 16<<10)
	return nil
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

// do sends one request (body may be nil) and returns the status code and the response
// body, which is valid until the next request. A connection that fails is closed; the next
// request dials a new one (the failed request counts as an error).
func (c *conn) do(method, path string, body []byte) (int, []byte, error) {
	return c.once(method, path, body)
}

func (c *conn) once(method, path string, body []byte) (int, []byte, error) {
	if c.c == nil {
		if err := c.dial(); err != nil {
			return 0, nil, err
		}
	}
	fail := func(err error) (int, []byte, error) {
		c.close()
		return 0, nil, err
	}
	_ = c.c.SetDeadline(time.Now().Add(60 * time.Second))
	w := c.bw
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(c.basePath)
	w.WriteString(path)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(c.hostHdr)
	w.WriteString("\r\nAccept: application/json\r\nUser-Agent: quotabench\r\n")
	if c.a.token != "" {
		w.WriteString("Authorization: Bearer ")
		w.WriteString(c.a.token)
		w.WriteString("\r\n")
	}
	if body != nil {
		w.WriteString("Content-Type: application/json\r\nContent-Length: ")
		w.WriteString(strconv.Itoa(len(body)))
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err != nil {
		return fail(err)
	}
	c.body.Reset()
	_, err = c.body.ReadFrom(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fail(err)
	}
	if resp.Close {
		c.close()
	}
	return resp.StatusCode, c.body.Bytes(), nil
}
