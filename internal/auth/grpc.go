package auth

import (
	"crypto/sha1"
	"crypto/subtle"
	"encoding/hex"
	"log/slog"
	"strings"
)

// gRPC requests (the RocketMQ 5 SDKs' MessagingService) carry no signed
// ext fields: the SDK signs the x-mq-date-time header value and sends
// "authorization: MQv2-HMAC-SHA1 Credential=<ak>, SignedHeaders=x-mq-date-time,
// Signature=<hex HMAC-SHA1>" (Java's DefaultAuthenticationContextBuilder.build
// for Metadata). The checks below are the remoting ones with that content.

// Refusal remarks of the gRPC header parse, Java's texts.
const (
	remarkNoDateTime   = "datetime is null."
	remarkBadAuthz     = "authentication header is incorrect."
	remarkBadAuthzItem = "authentication keyValues length is incorrect, actual length=1."
	remarkBadContextGR = "create authentication context error."
)

// Subject is the user a gRPC request authenticated as.
type Subject struct{ e *userEntry }

// Username is the subject's user name.
func (s Subject) Username() string {
	if s.e == nil {
		return ""
	}
	return s.e.user.Username
}

// AuthenticateGRPC checks a gRPC request's authorization and
// x-mq-date-time headers: they name an enabled user and carry that
// user's HMAC-SHA1 of the date-time. It returns the reason of a refusal.
// authenticationWhitelist lists remoting codes and so does not apply.
func (a *Authenticator) AuthenticateGRPC(authorization, dateTime string) (Subject, string, bool) {
	var sig [sha1.Size]byte
	ak, n, remark := parseGRPCAuthorization(authorization, dateTime, &sig)
	if remark != "" {
		return Subject{}, remark, false
	}
	if ak == "" {
		return Subject{}, remarkNoUser, false
	}
	e := a.users.lookup(ak)
	if e == nil {
		return Subject{}, "User:" + ak + " is not found.", false
	}
	if e.user.UserStatus == Disabled {
		return Subject{}, "User:" + ak + " is disabled.", false
	}
	if !e.mac.verifyRaw(dateTime, sig[:n]) {
		return Subject{}, remarkBadSignature, false
	}
	return Subject{e: e}, "", true
}

// parseGRPCAuthorization is the header parse of Java's builder: no
// authorization header is no user; otherwise the date-time is required
// and "<scheme> k=v, k=v" must split; Credential's first "/" part is the
// user, Signature is hex (decoded into sig, which it returns; a signature
// longer than SHA-1's cannot match and is returned empty).
func parseGRPCAuthorization(authorization, dateTime string, sig *[sha1.Size]byte) (ak string, n int, remark string) {
	if authorization == "" {
		return "", 0, ""
	}
	if dateTime == "" {
		return "", 0, remarkNoDateTime
	}
	_, params, ok := strings.Cut(authorization, " ")
	if !ok {
		return "", 0, remarkBadAuthz
	}
	if params == "" { // Java's "".split(",") is one empty item
		return "", 0, remarkBadAuthzItem
	}
	for params != "" {
		var kv string
		kv, params, _ = strings.Cut(params, ",")
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return "", 0, remarkBadAuthzItem
		}
		switch k {
		case "Credential":
			ak, _, _ = strings.Cut(v, "/")
		case "Signature":
			if len(v)%2 != 0 {
				return "", 0, remarkBadContextGR
			}
			if len(v) > 2*sha1.Size {
				if _, err := hex.DecodeString(v); err != nil {
					return "", 0, remarkBadContextGR
				}
				n = 0
				continue
			}
			m, err := hex.Decode(sig[:], stringBytes(v))
			if err != nil {
				return "", 0, remarkBadContextGR
			}
			n = m
		}
	}
	return ak, n, ""
}

// verifyRaw reports whether sig is the HMAC of content with p's secret,
// in time independent of where they differ.
func (p *macPool) verifyRaw(content string, sig []byte) bool {
	st := p.pool.Get().(*macState)
	st.h.Reset()
	st.h.Write(stringBytes(content))
	want := st.h.Sum(st.sum[:0])
	ok := len(sig) == len(want) && subtle.ConstantTimeCompare(want, sig) == 1
	p.pool.Put(st)
	return ok
}

// GRPCCheck is one resource a gRPC request needs, with the actions of
// which the user needs one (Java's DefaultAuthorizationContextBuilder
// for gRPC messages).
type GRPCCheck struct {
	Type    ResourceType
	Name    string
	Actions ActionSet
}

// TopicCheck is Resource.ofTopic(name) with actions.
func TopicCheck(name string, actions ...Action) GRPCCheck {
	return GRPCCheck{Type: ResTopic, Name: name, Actions: Actions(actions...)}
}

// GroupCheck is Resource.ofGroup(name) (a retry topic names its group)
// with actions.
func GroupCheck(name string, actions ...Action) GRPCCheck {
	c := groupCheck(name, Actions(actions...))
	return GRPCCheck{Type: c.typ, Name: c.name, Actions: c.actions}
}

// AuthorizeGRPC checks that s may do checks from remoteAddr ("ip:port")
// and returns the reason of a refusal (AclAuthorizationHandler's).
func (z *Authorizer) AuthorizeGRPC(s Subject, checks []GRPCCheck, remoteAddr string) (string, bool) {
	if len(checks) == 0 {
		return "", true
	}
	if s.e == nil {
		return remarkAuthzFailed, false
	}
	var buf [4]check
	cs := buf[:0]
	for _, c := range checks {
		cs = append(cs, check{typ: c.Type, name: c.Name, actions: c.Actions})
	}
	src := sourceOf(remoteAddr)
	return z.decide(s.e, cs, &src)
}

// LogGRPCRefusal logs a refused gRPC request, sharing Guard's rate limit.
func (a *Authenticator) LogGRPCRefusal(remote, rpc, remark string) {
	a.refused.Log(a.log, slog.LevelInfo, "auth: gRPC request refused", "remote", remote, "rpc", rpc, "reason", remark)
}
