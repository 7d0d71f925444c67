// Package config holds rocketd's configuration structs, their defaults and
// validation, and the loader for the Java properties files RocketMQ
// operators already have (broker.conf, namesrv.conf).
//
// Shape (style.md §8): plain structs whose zero value means "default",
// EnsureDefaults() to fill them in, Validate() to reject what cannot work.
// Configuration is loaded once in cmd/ and passed down; there are no globals.
//
// File format: java.util.Properties text (see ParseProperties for the exact
// rules: '#'/'!' comment lines, '=' ':' or blank separators, backslash
// continuations and escapes). Bind maps keys onto struct fields by name, as
// RocketMQ maps them onto setters, and returns unknown keys so the caller can
// warn about them.
//
// TLS (tls.go): RocketMQ's tls.* keys (Java reads them as system properties
// and from tls.config.file) are read from broker.conf / namesrv.conf, then
// from tls.config.file (default /etc/rocketmq/tls.properties when it
// exists), whose values win except for tls.server.mode, tls.enable and
// useTLS. Defaults are Java's: permissive, test mode (a self-signed
// certificate made at start). Certificates and keys are PEM; keys PKCS#8
// (plain, or encrypted with PBES2 or PKCS#12 PBE-SHA1-RC4-128/3DES and a
// keyPassword), PKCS#1 or SEC1.
// Settings Java would silently ignore (an unknown mode, certificate paths
// in test mode) are refused. TLS settings are never rendered anywhere
// (GET_BROKER_CONFIG skips them; fields tagged secret are never shown).
//
// Web console (console.go, rocketd's own keys): consoleEnable (false),
// consoleListenAddr (DefaultConsoleListenAddr, loopback), and
// consoleAccessKey/consoleSecretKey, the credentials the console signs its
// admin calls with whenever set (else, with authenticationEnabled, the
// broker's innerClientAuthenticationCredentials). The secret is never shown.
//
// gRPC MessagingService (grpc.go): grpcServerEnable (rocketd's own key;
// false, turned on by rocketd serve) and grpcServerPort (Java's proxy key,
// DefaultGrpcServerPort 8081, 1..65535, not listenPort); it listens on
// bindAddress.
package config
