package processor

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// authFamily serves the user and ACL admin requests of RocketMQ 5.3
// (AUTH_*_USER, AUTH_*_ACL), for SUPER users only; with no user table
// (Deps.Users nil) they reach the default processor.
type authFamily struct {
	log   *slog.Logger
	users *auth.Users
	acls  *auth.ACLs
}

func (a *authFamily) register(srv *remoting.Server, pools Families) {
	a.registerUsers(srv, pools)
	a.registerACLs(srv, pools)
}

// registerUsers serves the user admin requests of RocketMQ 5.3
// (AdminBrokerProcessor: AUTH_CREATE_USER .. AUTH_LIST_USER), which
// mqadmin's createUser, updateUser, deleteUser, getUser and listUser send.
func (a *authFamily) registerUsers(srv *remoting.Server, f Families) {
	if a.users == nil {
		return
	}
	srv.Handle(protocol.AuthCreateUser, f.Admin, a.superOnly(a.handleCreateUser))
	srv.Handle(protocol.AuthUpdateUser, f.Admin, a.superOnly(a.handleUpdateUser))
	srv.Handle(protocol.AuthDeleteUser, f.Admin, a.superOnly(a.handleDeleteUser))
	srv.Handle(protocol.AuthGetUser, f.Admin, a.superOnly(a.handleGetUser))
	srv.Handle(protocol.AuthListUser, f.Admin, a.superOnly(a.handleListUser))
}

// superOnly lets only SUPER users (or unsigned requests, which reach the
// handler only when authentication is off) manage users and ACLs. Java
// lets any user through when authorization is off, and GET_USER answers
// with the password: a NORMAL user could read a SUPER user's secret.
// With authorization on Java lets a NORMAL user whose ACL grants
// Cluster Update/Get through; rocketd still refuses it here (stricter:
// a user that may edit ACLs could grant itself everything).
func (a *authFamily) superOnly(h remoting.HandlerFunc) remoting.HandlerFunc {
	return func(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
		isSuper, refused := a.requesterIsSuper(req)
		if refused != nil {
			return refused
		}
		if !isSuper {
			return remoting.NewResponse(protocol.NoPermission,
				"User:"+req.ExtField(auth.FieldAccessKey)+" is not a super user; only super users manage users")
		}
		return h(conn, req)
	}
}

// userInfo is Java's UserInfo body: type and status by name ("Super",
// "Normal"; "enable", "disable").
type userInfo struct {
	Username   string `json:"username"`
	Password   string `json:"password,omitempty"`
	UserType   string `json:"userType,omitempty"`
	UserStatus string `json:"userStatus,omitempty"`
}

func toUserInfo(u auth.User) userInfo {
	return userInfo{Username: u.Username, Password: u.Password, UserType: u.UserType.String(), UserStatus: u.UserStatus.String()}
}

// fromUserInfo is UserConverter.convertUser: an unknown type or status
// name is left unset (Java's getByName returns null).
func fromUserInfo(ui userInfo) auth.User {
	u := auth.User{Username: ui.Username, Password: ui.Password}
	u.UserType, _ = auth.ParseUserType(ui.UserType)
	u.UserStatus, _ = auth.ParseUserStatus(ui.UserStatus)
	return u
}

const remarkBlankUsername = "The username is blank"

// userFromRequest decodes the username header and the UserInfo body.
func userFromRequest(req *remoting.Command) (auth.User, *remoting.Command) {
	name := req.ExtField("username")
	if name == "" {
		return auth.User{}, remoting.NewResponse(protocol.SystemError, remarkBlankUsername)
	}
	var ui userInfo
	if len(req.Body) > 0 {
		if err := json.Unmarshal(req.Body, &ui); err != nil {
			return auth.User{}, remoting.NewResponse(protocol.SystemError, "bad UserInfo body: "+err.Error())
		}
	}
	ui.Username = name
	return fromUserInfo(ui), nil
}

// requesterIsSuper is Java's !isNotSuperUserLogin: an unsigned request
// (the broker does not authenticate) counts as a super user's.
func (a *authFamily) requesterIsSuper(req *remoting.Command) (bool, *remoting.Command) {
	ak := req.ExtField(auth.FieldAccessKey)
	if ak == "" {
		return true, nil
	}
	u, found := a.users.Get(ak)
	if !found {
		return false, remoting.NewResponse(protocol.NoPermission, "User:"+ak+" is not found")
	}
	return u.UserType == auth.Super, nil
}

// authFailure is handleAuthException: the manager's refusals are
// NO_PERMISSION with their text; a failure to store is SYSTEM_ERROR.
func (a *authFamily) authFailure(op string, err error) *remoting.Command {
	var ve *auth.ValidationError
	switch {
	case errors.Is(err, auth.ErrUserExists), errors.Is(err, auth.ErrUserNotExist), errors.As(err, &ve):
		return remoting.NewResponse(protocol.NoPermission, err.Error())
	}
	a.log.Error("processor: "+op+" failed", "err", err)
	return remoting.NewResponse(protocol.SystemError, "An system error occurred, please try again later.")
}

func (a *authFamily) handleCreateUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	u, bad := userFromRequest(req)
	if bad != nil {
		return bad
	}
	if err := a.users.Create(u); err != nil {
		return a.authFailure("create user", err)
	}
	return ok(nil)
}

// handleUpdateUser applies the password, type and status given (Java
// 5.3.1 stores the old user unchanged).
func (a *authFamily) handleUpdateUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	u, bad := userFromRequest(req)
	if bad != nil {
		return bad
	}
	if err := a.users.Update(u); err != nil {
		return a.authFailure("update user", err)
	}
	return ok(nil)
}

func (a *authFamily) handleDeleteUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name := req.ExtField("username")
	if _, found := a.users.Get(name); !found {
		return ok(nil) // as Java: deleting an unknown user succeeds
	}
	if err := a.users.Delete(name); err != nil {
		return a.authFailure("delete user", err)
	}
	if a.acls != nil { // Java deletes the user's ACL with it
		if err := a.acls.DeleteUser(name); err != nil {
			return a.authFailure("delete user", err)
		}
	}
	return ok(nil)
}

func (a *authFamily) handleGetUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	name := req.ExtField("username")
	if strings.TrimSpace(name) == "" {
		return remoting.NewResponse(protocol.SystemError, remarkBlankUsername)
	}
	resp := ok(nil)
	if u, found := a.users.Get(name); found {
		resp.Body, _ = json.Marshal(toUserInfo(u))
	}
	return resp
}

func (a *authFamily) handleListUser(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	users := a.users.List(req.ExtField("filter"))
	out := make([]userInfo, 0, len(users))
	for _, u := range users {
		out = append(out, toUserInfo(u))
	}
	resp := ok(nil)
	resp.Body, _ = json.Marshal(out)
	return resp
}
