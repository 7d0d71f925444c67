package processor

import (
	"encoding/json"
	"strings"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// registerACLs serves the ACL admin requests of RocketMQ 5.3
// (AdminBrokerProcessor: AUTH_CREATE_ACL .. AUTH_LIST_ACL), which
// mqadmin's createAcl, updateAcl, deleteAcl, getAcl and listAcl send.
// Only SUPER users manage ACLs, as users (superOnly): Java asks for
// Cluster Update/Get when authorization is on and nothing when it is off.
func (a *authFamily) registerACLs(srv *remoting.Server, f Families) {
	if a.acls == nil || a.users == nil {
		return
	}
	srv.Handle(protocol.AuthCreateACL, f.Admin, a.superOnly(a.handlePutACL))
	srv.Handle(protocol.AuthUpdateACL, f.Admin, a.superOnly(a.handlePutACL))
	srv.Handle(protocol.AuthDeleteACL, f.Admin, a.superOnly(a.handleDeleteACL))
	srv.Handle(protocol.AuthGetACL, f.Admin, a.superOnly(a.handleGetACL))
	srv.Handle(protocol.AuthListACL, f.Admin, a.superOnly(a.handleListACL))
}

// handlePutACL is createAcl and updateAcl, which Java 5.3 implements the
// same way: a new ACL is stored, an existing one gets the policies merged
// in. The subject is the body's, else the header's.
func (a *authFamily) handlePutACL(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	var info auth.AclInfo
	if len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, &info); err != nil {
			return remoting.NewResponse(protocol.SystemError, "bad AclInfo body: "+err.Error())
		}
	}
	if len(info.Policies) == 0 {
		return remoting.NewResponse(protocol.SystemError, "The body of acl is null")
	}
	acl, err := auth.ACLFromInfo(info, req.ExtField("subject"))
	if err == nil {
		err = a.acls.Put(acl)
	}
	if err != nil {
		return a.authFailure("put acl", err)
	}
	return ok(nil)
}

// handleDeleteACL removes the entry of the header's resource from the
// policy of its policyType (CUSTOM when blank or unknown), or the whole
// ACL when no resource is given.
func (a *authFamily) handleDeleteACL(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	pt, _ := auth.ParsePolicyType(req.ExtField("policyType"))
	var res *auth.Resource
	if r, found := auth.ParseResource(req.ExtField("resource")); found {
		res = &r
	}
	if err := a.acls.Delete(req.ExtField("subject"), pt, res); err != nil {
		return a.authFailure("delete acl", err)
	}
	return ok(nil)
}

// handleGetACL answers the subject's ACL as AclInfo, or no body when the
// user has none.
func (a *authFamily) handleGetACL(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	acl, found, err := a.acls.Get(req.ExtField("subject"))
	if err != nil {
		return a.authFailure("get acl", err)
	}
	resp := ok(nil)
	if found {
		resp.Body, _ = json.Marshal(acl.Info())
	}
	return resp
}

// handleListACL answers the ACLs matching subjectFilter and
// resourceFilter (substrings) as a list of AclInfo, or no body when
// none does.
func (a *authFamily) handleListACL(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	acls := a.acls.List(strings.TrimSpace(req.ExtField("subjectFilter")), strings.TrimSpace(req.ExtField("resourceFilter")))
	resp := ok(nil)
	if len(acls) > 0 {
		out := make([]auth.AclInfo, 0, len(acls))
		for i := range acls {
			out = append(out, acls[i].Info())
		}
		resp.Body, _ = json.Marshal(out)
	}
	return resp
}
