package console

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// writeHeader is the header every write action must carry. A browser sends
// a custom header cross-origin only after a CORS preflight, which the
// console never answers: a foreign page cannot forge the request.
const writeHeader = "X-Rocketd-Console"

// checkWrite is the CSRF check of every write action (doc.go, Security):
// POST, a JSON body, the custom header, and when the browser names the
// origin, the console's own.
func checkWrite(r *http.Request) (status int, reason string) {
	if r.Method != http.MethodPost {
		return http.StatusMethodNotAllowed, "write actions need POST"
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return http.StatusUnsupportedMediaType, "write actions need Content-Type application/json"
	}
	if r.Header.Get(writeHeader) != "1" {
		return http.StatusForbidden, "write actions need the " + writeHeader + " header"
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return http.StatusForbidden, "cross-site write refused (Sec-Fetch-Site " + site + ")"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return http.StatusForbidden, "cross-origin write refused (Origin " + origin + ")"
		}
	}
	return 0, ""
}

// hostAllowed guards against DNS rebinding while the console listens on
// loopback: a page of a foreign name that resolves to 127.0.0.1 sends its
// own name as Host. IP literals and localhost are accepted.
func hostAllowed(host string) bool {
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.Trim(h, "[]")
	return strings.EqualFold(h, "localhost") || net.ParseIP(h) != nil
}

// isLoopbackListen reports whether addr (host:port) is a loopback address.
func isLoopbackListen(addr string) bool {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// secureHeaders are set on every answer: no framing (clickjacking), no
// content sniffing, scripts and styles from the console only.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		next.ServeHTTP(w, r)
	})
}
