package config

import (
	"strings"
	"testing"
)

func TestConsoleKeys(t *testing.T) {
	c, unknown, err := BrokerConfigFromProperties(Properties{})
	if err != nil || len(unknown) != 0 {
		t.Fatal(err, unknown)
	}
	if c.ConsoleEnable || c.ConsoleListenAddr != DefaultConsoleListenAddr {
		t.Fatalf("defaults: enable %v addr %q", c.ConsoleEnable, c.ConsoleListenAddr)
	}
	c, _, err = BrokerConfigFromProperties(Properties{"consoleEnable": "true", "consoleListenAddr": "0.0.0.0:9000"})
	if err != nil || !c.ConsoleEnable || c.ConsoleListenAddr != "0.0.0.0:9000" {
		t.Fatalf("bound: %v %+v", err, c.ConsoleListenAddr)
	}
	for _, tc := range []struct{ props Properties }{
		{Properties{"consoleListenAddr": "8082"}},
		{Properties{"consoleListenAddr": "127.0.0.1:99999"}},
		{Properties{"consoleListenAddr": "some.host:80"}},
		{Properties{"consoleAccessKey": "ak"}},
	} {
		if _, _, err := BrokerConfigFromProperties(tc.props); err == nil || !strings.Contains(err.Error(), "console") {
			t.Errorf("%v: err %v, want one naming the console key", tc.props, err)
		}
	}
}

func TestConsoleCredentials(t *testing.T) {
	c := NewBrokerConfig()
	if _, _, ok, err := c.ConsoleCredentials(); ok || err != nil {
		t.Fatalf("without authentication: ok %v err %v", ok, err)
	}
	c.Auth.AuthenticationEnabled = true
	if _, _, _, err := c.ConsoleCredentials(); err == nil {
		t.Fatal("authentication without any credentials: no error")
	}
	c.Auth.InnerClientAuthenticationCredentials = `{"accessKey":"inner","secretKey":"s1"}`
	if ak, sk, ok, err := c.ConsoleCredentials(); !ok || err != nil || ak != "inner" || sk != "s1" {
		t.Fatalf("inner: %q %q %v %v", ak, sk, ok, err)
	}
	c.ConsoleAccessKey, c.ConsoleSecretKey = "admin", "s2"
	if ak, sk, ok, err := c.ConsoleCredentials(); !ok || err != nil || ak != "admin" || sk != "s2" {
		t.Fatalf("console keys: %q %q %v %v", ak, sk, ok, err)
	}
	// Set, they sign even where this broker does not authenticate.
	c.Auth.AuthenticationEnabled = false
	if ak, _, ok, _ := c.ConsoleCredentials(); !ok || ak != "admin" {
		t.Fatalf("console keys without local authentication: %q %v", ak, ok)
	}
}
