package namesrv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// TestNamesrvAuthorization: with authorizationEnabled the NameServer
// checks a NORMAL user's route queries on the topic (Pub, Sub or Get) and
// its cluster-wide codes on "Cluster:" (granted by Cluster:*), from the
// acls.json next to users.json; a SUPER user passes.
func TestNamesrvAuthorization(t *testing.T) {
	dir := t.TempDir()
	users := `{"version":1,"users":[{"username":"app","password":"app-pw","userType":2,"userStatus":1}]}`
	acls := `{"version":1,"acls":[{"subject":"User:app","policies":[{"policyType":"Custom","entries":[
		{"resource":"Topic:pub*","actions":["Pub"],"decision":"Allow"},
		{"resource":"Topic:pub-secret","actions":["All"],"decision":"Deny"},
		{"resource":"Cluster:*","actions":["Get"],"decision":"Allow"}]}]}]}`
	for name, body := range map[string]string{auth.UsersFile: users, auth.ACLsFile: acls} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ts := startTestServer(t, func(c *Config) {
		c.Namesrv.KVConfigPath = filepath.Join(dir, "kvConfig.json")
		c.Namesrv.Auth = config.AuthConfig{AuthenticationEnabled: true, AuthorizationEnabled: true,
			InitAuthenticationUser: `{"username":"root","password":"root-pw"}`}
	})
	call := func(user, pw string, code int32, ext map[string]string) *remoting.Command {
		c := remoting.NewClient(remoting.ClientConfig{BeforeRequest: auth.Credentials{AccessKey: user, SecretKey: pw}.Sign})
		defer c.Close()
		return ts.callWith(c, remoting.NewRequest(code, ext, nil))
	}
	route := func(user, pw, topic string) *remoting.Command {
		return call(user, pw, protocol.GetRouteinfoByTopic, map[string]string{"topic": topic})
	}
	// Allowed, then answered "no route" by the handler.
	expectCode(t, route("app", "app-pw", "pub-orders"), protocol.TopicNotExist, "")
	expectCode(t, route("app", "app-pw", "pub-secret"), protocol.NoPermission,
		"User:app has no permission to access Topic:pub-secret from 127.0.0.1, the decision is deny.")
	expectCode(t, route("app", "app-pw", "other"), protocol.NoPermission, "no matched policies.")
	expectCode(t, route("root", "root-pw", "pub-secret"), protocol.TopicNotExist, "")
	expectCode(t, call("app", "app-pw", protocol.GetKVConfig, map[string]string{"namespace": "n", "key": "k"}), protocol.QueryNotFound, "")
	expectCode(t, call("app", "app-pw", protocol.PutKVConfig, map[string]string{"namespace": "n", "key": "k", "value": "v"}),
		protocol.NoPermission, "User:app has no permission to access Cluster: from 127.0.0.1, no matched policies.")
}
