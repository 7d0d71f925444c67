package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestAuthKeysBind: Java's AuthConfig keys bind from broker.conf and
// namesrv.conf, and are not reported as unknown.
func TestAuthKeysBind(t *testing.T) {
	props := Properties{
		"brokerName":                           "b",
		"authenticationEnabled":                "true",
		"authenticationProvider":               JavaDefaultAuthenticationProvider,
		"authenticationMetadataProvider":       JavaLocalAuthenticationMetadata,
		"authenticationStrategy":               JavaStatefulAuthentication,
		"authenticationWhitelist":              "34, 10",
		"initAuthenticationUser":               `{"username":"rocketmq","password":"12345678"}`,
		"innerClientAuthenticationCredentials": `{"accessKey":"inner","secretKey":"inner-sk"}`,
		"aclEnable":                            "true",
	}
	c, unknown, err := BrokerConfigFromProperties(props)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(unknown, []string{"aclEnable"}) {
		t.Fatalf("unknown = %v", unknown)
	}
	if !c.Auth.AuthenticationEnabled {
		t.Fatal("authenticationEnabled not bound")
	}
	codes, err := c.Auth.WhitelistCodes()
	if err != nil || !reflect.DeepEqual(codes, []int32{34, 10}) {
		t.Fatalf("whitelist = %v, %v", codes, err)
	}
	u, ok, err := c.Auth.ParseInitUser()
	if err != nil || !ok || u != (InitUser{Username: "rocketmq", Password: "12345678"}) {
		t.Fatalf("init user = %+v %v %v", u, ok, err)
	}
	cr, ok, err := c.Auth.ParseInnerCredentials()
	if err != nil || !ok || cr.AccessKey != "inner" || cr.SecretKey != "inner-sk" {
		t.Fatalf("inner = %+v %v %v", cr, ok, err)
	}

	path := filepath.Join(t.TempDir(), "namesrv.conf")
	if err := os.WriteFile(path, []byte("listenPort=9999\nauthenticationEnabled=true\nauthenticationWhitelist=105\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	nc, unknown, err := LoadNamesrvFile(path)
	if err != nil || len(unknown) != 0 || !nc.Auth.AuthenticationEnabled || nc.Auth.AuthenticationWhitelist != "105" {
		t.Fatalf("namesrv: %+v unknown=%v err=%v", nc.Auth, unknown, err)
	}
	if got := nc.UsersPath(); got != filepath.Join(filepath.Dir(nc.KVConfigPath), "users.json") {
		t.Fatalf("UsersPath = %s", got)
	}
}

// TestAuthKeysRefused: settings that cannot work stop the start, naming
// the key.
func TestAuthKeysRefused(t *testing.T) {
	for key, val := range map[string]string{
		"authenticationProvider":               "com.example.MyProvider",
		"authenticationMetadataProvider":       "com.example.Ldap",
		"authenticationStrategy":               "x",
		"authenticationWhitelist":              "SEND_MESSAGE",
		"initAuthenticationUser":               `{"username":"a"}`,
		"innerClientAuthenticationCredentials": `not json`,
		"authorizationEnabled":                 "true", // without authentication
		"migrateAuthFromV1Enabled":             "true", // without authentication
		"authorizationProvider":                "com.example.Opa",
		"authorizationStrategy":                "x",
		"authorizationWhitelist":               "PULL_MESSAGE",
	} {
		_, _, err := BrokerConfigFromProperties(Properties{key: val})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%s: err = %v", key, val, err)
		}
	}
}

// TestAuthorizationKeysBind: authorization with authentication starts,
// and its keys reach AuthConfig.
func TestAuthorizationKeysBind(t *testing.T) {
	bc, _, err := BrokerConfigFromProperties(Properties{
		"authenticationEnabled":    "true",
		"authorizationEnabled":     "true",
		"authorizationWhitelist":   "105, 34",
		"authorizationStrategy":    JavaStatefulAuthorization,
		"migrateAuthFromV1Enabled": "true",
		"plainAclFile":             "/etc/rocketmq/plain_acl.yml",
	})
	if err != nil {
		t.Fatal(err)
	}
	a := bc.Auth
	codes, err := a.AuthorizationWhitelistCodes()
	if err != nil || !a.AuthorizationEnabled || !a.MigrateAuthFromV1Enabled || a.PlainAclFile != "/etc/rocketmq/plain_acl.yml" ||
		len(codes) != 2 || codes[0] != 105 || codes[1] != 34 {
		t.Fatalf("auth = %+v, whitelist %v, %v", a, codes, err)
	}
}

// TestControllerModeTakesAuthentication: a Java 5.x deployment with
// authenticationEnabled in controller mode starts unchanged (issue 17);
// controller mode alone and the AutoSwitch handshake's flags are taken.
func TestControllerModeTakesAuthentication(t *testing.T) {
	bc, _, err := BrokerConfigFromProperties(Properties{"enableControllerMode": "true", "controllerAddr": "127.0.0.1:9878",
		"authenticationEnabled": "true", "innerClientAuthenticationCredentials": `{"accessKey":"rocketmq","secretKey":"12345678"}`})
	if err != nil || !bc.EnableControllerMode || !bc.Auth.AuthenticationEnabled {
		t.Fatalf("controller mode %v, authentication %v, err %v", bc.EnableControllerMode, bc.Auth.AuthenticationEnabled, err)
	}
	bc, _, err = BrokerConfigFromProperties(Properties{"enableControllerMode": "true", "controllerAddr": "127.0.0.1:9878",
		"syncFromLastFile": "true", "asyncLearner": "true"})
	if err != nil || !bc.SyncFromLastFile || !bc.AsyncLearner {
		t.Fatalf("bc %+v err %v", bc.SyncFromLastFile, err)
	}
}
