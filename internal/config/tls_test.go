package config

import (
	"crypto/tls"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketd/rocketd/internal/testutil/certs"
)

func TestTLSDefaultsAreJavas(t *testing.T) {
	c, unknown, err := BrokerConfigFromProperties(Properties{})
	if err != nil || len(unknown) > 0 {
		t.Fatal(err, unknown)
	}
	if c.TLS.Mode() != "permissive" || !c.TLS.testMode() || c.TLS.ClientEnabled() {
		t.Fatalf("defaults: mode %s test %v client %v", c.TLS.Mode(), c.TLS.testMode(), c.TLS.ClientEnabled())
	}
	sc, err := c.TLS.ServerTLS()
	if err != nil || sc == nil || len(sc.Certificates) != 1 || sc.ClientAuth != tls.VerifyClientCertIfGiven {
		t.Fatalf("test-mode server config: %+v %v", sc, err)
	}
	cc, err := c.TLS.ClientTLS()
	if err != nil || cc != nil {
		t.Fatalf("client TLS without tls.enable: %+v %v", cc, err)
	}
	// enforcing turns the client side on, as NettyClientConfig.useTLS does.
	c.TLS.ServerMode = "enforcing"
	if cc, err := c.TLS.ClientTLS(); err != nil || cc == nil || !cc.InsecureSkipVerify {
		t.Fatalf("client TLS in enforcing mode: %+v %v", cc, err)
	}
	c.TLS.UseTLS = "false"
	if cc, _ := c.TLS.ClientTLS(); cc != nil {
		t.Fatal("useTLS=false did not turn the client side off")
	}
}

// tlsFiles writes a CA, a server pair and a client pair.
func tlsFiles(t *testing.T) (dir string, ca *certs.CA) {
	dir = t.TempDir()
	ca = certs.NewCA(t, "config CA")
	ca.WriteCA(t, dir, "ca")
	ca.Issue(t, "server").Write(t, dir, "server")
	ca.Issue(t, "client").Write(t, dir, "client")
	return dir, ca
}

func TestTLSKeysFromBrokerConfAndFile(t *testing.T) {
	dir, _ := tlsFiles(t)
	file := filepath.Join(dir, "tls.properties")
	// The file wins over broker.conf, except for the keys it may not set.
	text := "tls.test.mode.enable=false\ntls.server.need.client.auth=require\ntls.server.authClient=true\n" +
		"tls.server.certPath=" + filepath.Join(dir, "server.pem") + "\ntls.server.keyPath=" + filepath.Join(dir, "server.key") +
		"\ntls.server.trustCertPath=" + filepath.Join(dir, "ca.pem") + "\ntls.server.mode=disabled\ntls.bogus=1\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := BrokerConfigFromProperties(Properties{
		"tls.server.mode": "enforcing", "tls.config.file": file, "tls.server.need.client.auth": "none",
		"tls.enable": "true", "tls.client.authServer": "true", "tls.client.trustCertPath": filepath.Join(dir, "ca.pem"),
		"bindAddress": "127.0.0.1", "tls.nope": "x",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{file + ": tls.bogus", file + ": tls.server.mode", "tls.nope"}
	if strings.Join(unknown, ",") != strings.Join(want, ",") {
		t.Fatalf("unknown keys %q, want %q", unknown, want)
	}
	if c.BindAddress != "127.0.0.1" || c.TLS.Mode() != "enforcing" || c.TLS.ServerNeedClientAuth != "require" {
		t.Fatalf("bound: %q %q %q", c.BindAddress, c.TLS.Mode(), c.TLS.ServerNeedClientAuth)
	}
	sc, err := c.TLS.ServerTLS()
	if err != nil {
		t.Fatal(err)
	}
	if sc.ClientAuth != tls.RequireAndVerifyClientCert || sc.ClientCAs == nil || len(sc.Certificates) != 1 {
		t.Fatalf("server config: auth %v CAs %v certs %d", sc.ClientAuth, sc.ClientCAs != nil, len(sc.Certificates))
	}
	cc, err := c.TLS.ClientTLS()
	if err != nil || cc == nil || cc.VerifyConnection == nil {
		t.Fatalf("client config verifies nothing: %+v %v", cc, err)
	}
}

func TestTLSClientAuthModes(t *testing.T) {
	for _, tc := range []struct {
		need       string
		authClient bool
		want       tls.ClientAuthType
	}{
		{"none", true, tls.NoClientCert},
		{"", false, tls.NoClientCert},
		{"optional", false, tls.RequestClientCert},
		{"OPTIONAL", true, tls.VerifyClientCertIfGiven},
		{"require", false, tls.RequireAnyClientCert},
		{"require", true, tls.RequireAndVerifyClientCert},
	} {
		c := TLSConfig{TestModeEnable: "false", ServerNeedClientAuth: tc.need, ServerAuthClient: tc.authClient}
		if got, err := c.clientAuth(); err != nil || got != tc.want {
			t.Errorf("need=%q authClient=%v: %v %v, want %v", tc.need, tc.authClient, got, err, tc.want)
		}
	}
}

func TestTLSRefusals(t *testing.T) {
	dir, _ := tlsFiles(t)
	for _, tc := range []struct {
		name  string
		props Properties
		want  string
	}{
		{"misspelt mode", Properties{"tls.server.mode": "enforce"}, `tls.server.mode="enforce"`},
		{"bad client auth", Properties{"tls.server.need.client.auth": "always"}, "tls.server.need.client.auth"},
		{"test mode ignores files", Properties{"tls.server.certPath": filepath.Join(dir, "server.pem"),
			"tls.server.keyPath": filepath.Join(dir, "server.key")}, "tls.test.mode.enable=false"},
		{"no certificate", Properties{"tls.test.mode.enable": "false"}, "needs tls.server.certPath"},
		{"bad boolean", Properties{"tls.enable": "yes please"}, "tls.enable"},
		{"missing tls.config.file", Properties{"tls.config.file": filepath.Join(dir, "nope.properties")}, "tls.config.file"},
		{"bindAddress with port", Properties{"bindAddress": "127.0.0.1:10911"}, "bindAddress"},
	} {
		if _, _, err := BrokerConfigFromProperties(tc.props); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error naming %q", tc.name, err, tc.want)
		}
	}
	// Files that do not load fail at ServerTLS with the key's name.
	c := TLSConfig{TestModeEnable: "false", ServerCertPath: filepath.Join(dir, "server.pem"), ServerKeyPath: filepath.Join(dir, "missing.key")}
	if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "tls.server.keyPath") {
		t.Fatalf("missing key: %v", err)
	}
	c.ServerKeyPath, c.ServerKeyPassword = filepath.Join(dir, "server.key"), "pw"
	if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "not encrypted") {
		t.Fatalf("password for a plain key: %v", err)
	}
}

// TestTLSEncryptedKeys reads keys encrypted by openssl pkcs8 -topk8 with
// PBES2 and with the PKCS#12 schemes (RocketMQ's guide), and refuses others
// with the command that converts them.
func TestTLSEncryptedKeys(t *testing.T) {
	if _, err := exec.LookPath("openssl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("openssl not found")
		}
		t.Skip("openssl not found")
	}
	dir, _ := tlsFiles(t)
	plain := filepath.Join(dir, "server.key")
	openssl := func(out string, args ...string) {
		t.Helper()
		args = append([]string{"pkcs8", "-topk8", "-in", plain, "-out", out, "-passout", "pass:123456"}, args...)
		if b, err := exec.Command("openssl", args...).CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("openssl %v: %v\n%s", args, err, b)
			}
			t.Skipf("openssl %v: %v\n%s", args, err, b)
		}
	}
	for _, v2 := range [][]string{{"-v2", "aes-256-cbc"}, {"-v2", "aes-128-cbc", "-v2prf", "hmacWithSHA1"}, {"-v2", "des3"}} {
		enc := filepath.Join(dir, "enc-"+v2[1]+".key")
		openssl(enc, v2...)
		c := TLSConfig{TestModeEnable: "false", ServerCertPath: filepath.Join(dir, "server.pem"), ServerKeyPath: enc, ServerKeyPassword: "123456"}
		if _, err := c.ServerTLS(); err != nil {
			t.Fatalf("%v: %v", v2, err)
		}
		c.ServerKeyPassword = "654321"
		if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "wrong keyPassword") {
			t.Fatalf("%v with a wrong password: %v", v2, err)
		}
		c.ServerKeyPassword = ""
		if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "set its keyPassword") {
			t.Fatalf("%v without a password: %v", v2, err)
		}
	}
	// PKCS#12 PBE, as RocketMQ's TLS guide makes keys (-v1
	// PBE-SHA1-RC4-128; OpenSSL 3 keeps RC4 in its legacy provider).
	for _, v1 := range [][]string{{"-v1", "PBE-SHA1-RC4-128", "-provider", "legacy", "-provider", "default"}, {"-v1", "PBE-SHA1-3DES"}} {
		enc := filepath.Join(dir, "enc-"+v1[1]+".key")
		openssl(enc, v1...)
		c := TLSConfig{TestModeEnable: "false", ServerCertPath: filepath.Join(dir, "server.pem"), ServerKeyPath: enc, ServerKeyPassword: "123456"}
		if _, err := c.ServerTLS(); err != nil {
			t.Fatalf("%v: %v", v1, err)
		}
		c.ServerKeyPassword = "12345"
		if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "wrong keyPassword") {
			t.Fatalf("%v with a wrong password: %v", v1, err)
		}
	}
	// A scheme not read is refused with the command that converts it.
	old := filepath.Join(dir, "md5des.key")
	openssl(old, "-v1", "PBE-MD5-DES", "-provider", "legacy", "-provider", "default")
	c := TLSConfig{TestModeEnable: "false", ServerCertPath: filepath.Join(dir, "server.pem"), ServerKeyPath: old, ServerKeyPassword: "123456"}
	if _, err := c.ServerTLS(); err == nil || !strings.Contains(err.Error(), "openssl pkcs8 -topk8 -v2 aes-256-cbc") {
		t.Fatalf("PBE-MD5-DES key: %v", err)
	}
}

func TestNamesrvTLSKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv.conf")
	if err := os.WriteFile(path, []byte("listenPort=9999\nbindAddress=127.0.0.1\ntls.server.mode=disabled\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := LoadNamesrvFile(path)
	if err != nil || len(unknown) > 0 {
		t.Fatal(err, unknown)
	}
	if c.BindAddress != "127.0.0.1" || c.TLS.Mode() != "disabled" || c.Validate() != nil {
		t.Fatalf("namesrv: %q %q %v", c.BindAddress, c.TLS.Mode(), c.Validate())
	}
	if sc, err := c.TLS.ServerTLS(); sc != nil || err != nil {
		t.Fatalf("disabled mode built a server config: %v %v", sc, err)
	}
}

// TestNamesrvUnknownKeysAcrossSections: a namesrv.conf key is unknown only
// when neither the main binder, the tls.* one nor the auth one knows it.
func TestNamesrvUnknownKeysAcrossSections(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namesrv.conf")
	text := "listenPort=9877\nbogus=1\ntls.nope=x\ntls.server.mode=permissive\nauthenticationEnabled=false\n"
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, unknown, err := LoadNamesrvFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bogus,tls.nope"; strings.Join(unknown, ",") != want {
		t.Fatalf("unknown keys %q, want %s", unknown, want)
	}
	if c.ListenPort != 9877 || c.TLS.Mode() != "permissive" {
		t.Fatalf("bound: %d %s", c.ListenPort, c.TLS.Mode())
	}
}
