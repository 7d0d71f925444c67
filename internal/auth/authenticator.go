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
	whitelist []int32     // request codes let through unsigned; few
	acls      *ACLs       // the ACL table Setup opened (nil: none)
	authz     *Authorizer // nil: authorization off
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

// SetAuthorizer makes Guard authorize every authenticated request with z
// (authorizationEnabled); call it before the guard is installed.
func (a *Authenticator) SetAuthorizer(z *Authorizer) { a.authz = z }

// ACLs returns the ACL table opened with the users (nil when the
// Authenticator was built without one).
func (a *Authenticator) ACLs() *ACLs { return a.acls }

// Authorizer returns the Authorizer Guard uses (nil: authorization off).
func (a *Authenticator) Authorizer() *Authorizer { return a.authz }

// Guard is the remoting.Guard that refuses a request failing
// Authenticate, or the Authorizer when one is set, with NO_PERMISSION and
// the reason as remark, as Java's AuthenticationPipeline and
// AuthorizationPipeline do (AbortProcessException).
func (a *Authenticator) Guard(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var src source
	if a.authz != nil {
		src = connSource(conn)
	}
	remark, ok := a.check(req, &src)
	if ok {
		return nil
	}
	a.refused.Log(a.log, slog.LevelInfo, "auth: request refused", "remote", conn.RemoteAddr(), "code", req.Code, "reason", remark)
	return remoting.NewResponse(protocol.NoPermission, remark)
}

// check is Guard's decision for a request from src: authentication, then
// authorization when it is on. One walk over the header's fields serves
// the credentials, the signed content and (unless the header is a map)
// the authorized resources.
func (a *Authenticator) check(req *remoting.Command, src *source) (remark string, ok bool) {
	var buf [stackFields]remoting.ExtEntry
	fields := req.AppendExt(buf[:0])
	e, remark, ok := a.authenticateFields(req, fields)
	if ok && a.authz != nil {
		v := extView{req: req}
		if req.ExtFields == nil {
			// A compact header would be walked again for each lookup; a
			// map answers them faster than a scan of the fields.
			v.fields = fields
		}
		remark, ok = a.authz.authorize(v, e, src)
	}
	return remark, ok
}

// Authenticate checks req: it names an enabled user (AccessKey) and
// carries that user's signature of its content. It returns the reason of
// a refusal.
func (a *Authenticator) Authenticate(req *remoting.Command) (remark string, ok bool) {
	_, remark, ok = a.authenticate(req)
	return remark, ok
}

// authenticate is Authenticate returning the user (nil when the code is
// whitelisted).
func (a *Authenticator) authenticate(req *remoting.Command) (*userEntry, string, bool) {
	var buf [stackFields]remoting.ExtEntry
	return a.authenticateFields(req, req.AppendExt(buf[:0]))
}

// authenticateFields is authenticate with req's ext fields collected
// (Command.AppendExt): they serve the credentials and the content.
func (a *Authenticator) authenticateFields(req *remoting.Command, fields []remoting.ExtEntry) (*userEntry, string, bool) {
	if slices.Contains(a.whitelist, req.Code) {
		return nil, "", true
	}
	ak, sig := credentialFields(fields)
	if ak == "" {
		return nil, remarkNoUser, false
	}
	e := a.users.lookup(ak)
	if e == nil {
		return nil, "User:" + ak + " is not found.", false
	}
	if e.user.UserStatus == Disabled {
		return nil, "User:" + ak + " is disabled.", false
	}
	if !e.mac.verify(req, fields, sig) {
		return nil, remarkBadSignature, false
	}
	return e, "", true
}

// credentialFields returns the AccessKey and Signature of a header's
// fields, the last entry of each as a lookup would.
func credentialFields(fields []remoting.ExtEntry) (accessKey, sig string) {
	for i := range fields {
		switch fields[i].Key {
		case FieldAccessKey:
			accessKey = fields[i].Value
		case FieldSignature:
			sig = fields[i].Value
		}
	}
	return accessKey, sig
}
