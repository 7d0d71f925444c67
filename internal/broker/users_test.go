package broker_test

import (
	"encoding/json"
	"testing"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestUserAdminRequests drives AUTH_CREATE_USER .. AUTH_LIST_USER as
// mqadmin 5.3 sends them (username header, UserInfo JSON body) against an
// authenticating broker: a new user can sign at once, a NORMAL user
// cannot manage users (nor read their passwords), a disabled or deleted user is
// refused, and the refusals carry Java's codes and remarks.
func TestUserAdminRequests(t *testing.T) {
	c := startAuthCluster(t, "")
	addr := c.b.Addr()
	userReq := func(code int32, name string, body any) *remoting.Command {
		ext := map[string]string{}
		if name != "" {
			ext["username"] = name
		}
		var raw []byte
		if body != nil {
			var err error
			if raw, err = json.Marshal(body); err != nil {
				t.Fatal(err)
			}
		}
		return remoting.NewRequest(code, ext, raw)
	}
	expect := func(what string, resp *remoting.Command, code int32, remark string) {
		t.Helper()
		if resp.Code != code || remark != "" && resp.Remark != remark {
			t.Fatalf("%s: %d %q, want %d %q", what, resp.Code, resp.Remark, code, remark)
		}
	}
	app := auth.Credentials{AccessKey: "app", SecretKey: "app-pw"}
	getConfig := func(cr *auth.Credentials) *remoting.Command {
		return rawInvoke(t, cr, addr, remoting.NewRequest(int32(protocol.GetBrokerConfig), nil, nil))
	}

	expect("app before it exists", getConfig(&app), protocol.NoPermission, "User:app is not found.")
	expect("create app", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthCreateUser), "app",
		map[string]string{"password": "app-pw", "userType": "Normal"})), protocol.Success, "")
	expect("app signs", getConfig(&app), protocol.Success, "")
	expect("create app again", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthCreateUser), "app",
		map[string]string{"password": "x"})), protocol.NoPermission, "The user is existed")
	expect("create without password", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthCreateUser), "nopw",
		map[string]string{})), protocol.NoPermission, "password can not be blank")
	expect("create without name", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthCreateUser), "",
		map[string]string{"password": "x"})), protocol.SystemError, "The username is blank")
	const notSuper = "User:app is not a super user; only super users manage users"
	expect("NORMAL creates SUPER", rawInvoke(t, &app, addr, userReq(int32(protocol.AuthCreateUser), "boss",
		map[string]string{"password": "x", "userType": "Super"})), protocol.NoPermission, notSuper)
	expect("NORMAL deletes SUPER", rawInvoke(t, &app, addr, userReq(int32(protocol.AuthDeleteUser), "rocketmq", nil)),
		protocol.NoPermission, notSuper)
	expect("NORMAL reads a password", rawInvoke(t, &app, addr, userReq(int32(protocol.AuthGetUser), "rocketmq", nil)),
		protocol.NoPermission, notSuper)
	expect("NORMAL lists users", rawInvoke(t, &app, addr, userReq(int32(protocol.AuthListUser), "", nil)),
		protocol.NoPermission, notSuper)

	resp := rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthGetUser), "app", nil))
	var got map[string]string
	if resp.Code != protocol.Success || json.Unmarshal(resp.Body, &got) != nil ||
		got["username"] != "app" || got["userType"] != "Normal" || got["userStatus"] != "enable" {
		t.Fatalf("get app: %d %q %s", resp.Code, resp.Remark, resp.Body)
	}
	resp = rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthListUser), "", nil))
	var list []map[string]string
	if resp.Code != protocol.Success || json.Unmarshal(resp.Body, &list) != nil || len(list) != 3 {
		t.Fatalf("list: %d %s", resp.Code, resp.Body)
	}

	expect("disable app", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthUpdateUser), "app",
		map[string]string{"userStatus": "disable"})), protocol.Success, "")
	expect("disabled app signs", getConfig(&app), protocol.NoPermission, "User:app is disabled.")
	expect("delete app", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthDeleteUser), "app", nil)), protocol.Success, "")
	expect("deleted app signs", getConfig(&app), protocol.NoPermission, "User:app is not found.")
	expect("update unknown", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthUpdateUser), "ghost",
		map[string]string{"password": "x"})), protocol.NoPermission, "The user is not exist")

	// The table survives a restart (users.json).
	expect("create app2", rawInvoke(t, &authAdmin, addr, userReq(int32(protocol.AuthCreateUser), "app2",
		map[string]string{"password": "pw2"})), protocol.Success, "")
	c.stopBroker()
	c.startBroker()
	expect("app2 after restart", rawInvoke(t, &auth.Credentials{AccessKey: "app2", SecretKey: "pw2"}, c.b.Addr(),
		remoting.NewRequest(int32(protocol.GetBrokerConfig), nil, nil)), protocol.Success, "")
}
