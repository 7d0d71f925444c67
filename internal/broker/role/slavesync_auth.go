package role

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Java 5.3's SlaveSynchronize copies no users and no ACLs: each Java
// broker keeps its own (mqadmin copyUser / copyAcl copy them by hand).
// A rocketd slave copies them from its master instead, so that clients
// failing over to the slave keep their credentials and permissions: every
// fullInterval (10 s) it lists the master's users (AUTH_LIST_USER) and
// ACLs (AUTH_LIST_ACL), signed with innerClientAuthenticationCredentials
// (a SUPER user), and makes its users.json and acls.json equal to them.
// A master that answers with no users is not copied (a master without
// authentication would otherwise lock the slave's own users out); one that
// does not serve the codes (Java before 5.3) is skipped. Changes made on
// the slave itself are overwritten by the next copy.

// userInfoWire is Java's UserInfo as AUTH_LIST_USER answers it.
type userInfoWire struct {
	Username   string `json:"username"`
	Password   string `json:"password"`
	UserType   string `json:"userType"`
	UserStatus string `json:"userStatus"`
}

// syncAuthDue copies the master's users and ACLs when the last copy is
// fullInterval old.
func (s *slaveSync) syncAuthDue(addr string, now time.Time) error {
	if s.r.tables.Users == nil || s.r.tables.ACLs == nil || now.Sub(s.lastAuth) < s.fullInterval {
		return nil
	}
	s.lastAuth = now
	resp, err := s.invokeAuth(addr, protocol.AuthListUser, map[string]string{"filter": ""})
	if err != nil || resp == nil {
		return err
	}
	var infos []userInfoWire
	if len(resp.Body) > 0 {
		if err := json.Unmarshal(resp.Body, &infos); err != nil {
			return fmt.Errorf("request %d: %w", protocol.AuthListUser, err)
		}
	}
	if len(infos) == 0 {
		return nil
	}
	users := make([]auth.User, 0, len(infos))
	for _, ui := range infos {
		u := auth.User{Username: ui.Username, Password: ui.Password}
		u.UserType, _ = auth.ParseUserType(ui.UserType)
		u.UserStatus, _ = auth.ParseUserStatus(ui.UserStatus)
		users = append(users, u)
	}
	if changed, err := s.r.tables.Users.Replace(users); err != nil {
		return fmt.Errorf("copy users: %w", err)
	} else if changed {
		s.r.log.Info("broker: users copied from the master", "master", addr, "users", len(users))
	}
	resp, err = s.invokeAuth(addr, protocol.AuthListACL, map[string]string{"subjectFilter": "", "resourceFilter": ""})
	if err != nil || resp == nil {
		return err
	}
	var aclInfos []auth.AclInfo
	if len(resp.Body) > 0 {
		if err := json.Unmarshal(resp.Body, &aclInfos); err != nil {
			return fmt.Errorf("request %d: %w", protocol.AuthListACL, err)
		}
	}
	acls := make([]auth.ACL, 0, len(aclInfos))
	for _, info := range aclInfos {
		acl, err := auth.ACLFromInfo(info, "")
		if err != nil {
			return fmt.Errorf("copy acls: %w", err)
		}
		acls = append(acls, acl)
	}
	if changed, err := s.r.tables.ACLs.Replace(acls); err != nil {
		return fmt.Errorf("copy acls: %w", err)
	} else if changed {
		s.r.log.Info("broker: ACLs copied from the master", "master", addr, "acls", len(acls))
	}
	return nil
}

// invokeAuth sends one list request; nil response and error: the master
// does not serve the code.
func (s *slaveSync) invokeAuth(addr string, code protocol.RequestCode, ext map[string]string) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(s.ctx, slaveSyncRequestTimeout)
	defer cancel()
	resp, err := s.r.cfg.NS.Invoke(ctx, addr, remoting.NewRequest(code, ext, nil))
	switch {
	case err != nil:
		return nil, &unreachableError{fmt.Errorf("request %d: %w", code, err)}
	case resp.Code == protocol.RequestCodeNotSupported:
		return nil, nil
	case resp.Code != protocol.Success:
		return nil, fmt.Errorf("request %d: code %d: %s", code, resp.Code, resp.Remark)
	}
	return resp, nil
}
