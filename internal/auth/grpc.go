package auth

import (
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
	ak, sig, remark := parseGRPCAuthorization(authorization, dateTime)
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
	if !e.mac.verifyRaw(dateTime, sig) {
		return Subject{}, remarkBadSignature, false
	}
	return Subject{e: e}, "", true
}

// parseGRPCAuthorization is the header parse of Java's builder: no
// authorization header is no user; otherwise the date-time is required
// and "<scheme> k=v, k=v" must split; Credential's first "/" part is the
// user, Signature is hex.
func parseGRPCAuthorization(authorization, dateTime string) (ak string, sig []byte, remark string) {
	if authorization == "" {
		return "", nil, ""
	}
	if dateTime == "" {
		return "", nil, remarkNoDateTime
	}
	_, params, ok := strings.Cut(authorization, " ")
	if !ok {
		return "", nil, remarkBadAuthz
	}
	for _, kv := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return "", nil, remarkBadAuthzItem
		}
		switch k {
		case "Credential":
			ak, _, _ = strings.Cut(v, "/")
		case "Signature":
			b, err := hex.DecodeString(v)
			if err != nil {
				return "", nil, remarkBadContextGR
			}
			sig = b
		}
	}
	return ak, sig, ""
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
