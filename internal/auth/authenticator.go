package auth

import (
	"log/slog"
	"slices"

	"github.com/rocketd/rocketd/internal/lograte"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Refusal remarks, Java's texts (DefaultAuthenticationHandler): they name
// the reason and the user the request claimed, never a secret.
const (
	remarkNoUser       = "username cannot be null."
	remarkBadSignature = "check signature failed."
)

// Authenticator checks the signature of every request a server receives
// (Java's AuthenticationPipeline with the default provider and the
// stateless strategy).
type Authenticator struct {
	users     *Users
	whitelist []int32 // request codes let through unsigned; few
	log       *slog.Logger
	refused   lograte.Limiter // one log line per 10 s at most
}

// NewAuthenticator returns an Authenticator over users; requests with a
// code in whitelist (authenticationWhitelist) are not checked.
func NewAuthenticator(users *Users, whitelist []int32, log *slog.Logger) *Authenticator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Authenticator{users: users, whitelist: slices.Clone(whitelist), log: log}
}

// Users is the table the Authenticator reads.
func (a *Authenticator) Users() *Users { return a.users }

// Guard is the remoting.Guard that refuses a request failing
// Authenticate with NO_PERMISSION and the reason as remark, as Java's
// AuthenticationPipeline does (AbortProcessException).
func (a *Authenticator) Guard(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	remark, ok := a.Authenticate(req)
	if ok {
		return nil
	}
	a.refused.Log(a.log, slog.LevelInfo, "auth: request refused", "remote", conn.RemoteAddr(), "code", req.Code, "reason", remark)
	return remoting.NewResponse(protocol.NoPermission, remark)
}

// Authenticate checks req: it names an enabled user (AccessKey) and
// carries that user's signature of its content. It returns the reason of
// a refusal.
func (a *Authenticator) Authenticate(req *remoting.Command) (remark string, ok bool) {
	if slices.Contains(a.whitelist, req.Code) {
		return "", true
	}
	v := req.LookupExt(signedKeys[:])
	ak, sig := v.Vals[0], v.Vals[1]
	if ak == "" {
		return remarkNoUser, false
	}
	e := a.users.lookup(ak)
	if e == nil {
		return "User:" + ak + " is not found.", false
	}
	if e.user.UserStatus == Disabled {
		return "User:" + ak + " is disabled.", false
	}
	if !e.mac.verify(req, sig) {
		return remarkBadSignature, false
	}
	return "", true
}

// signedKeys are the fields Authenticate reads, in one pass.
var signedKeys = [...]string{FieldAccessKey, FieldSignature}
