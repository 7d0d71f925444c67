// Package auth authenticates remoting requests as RocketMQ 5.3's auth
// module does (DefaultAuthenticationProvider with the stateless strategy):
// users with a password, a type and a status, and the request signature
// the official clients compute (Java's AclClientRPCHook, the Go client's
// primitive.Credentials). The broker and the NameServer install an
// Authenticator as their remoting server's Guard when
// authenticationEnabled=true; the broker's own calls sign with
// innerClientAuthenticationCredentials (Credentials as the remoting
// client's BeforeRequest).
//
// # Signature
//
// A signed request carries three ext fields (SessionCredentials):
//
//	AccessKey      the username
//	SecurityToken  optional; signed like any other field
//	Signature      base64(HmacSHA1(key = password, content))
//
// content is the values (not the keys) of every ext field except
// Signature, concatenated in the order of their keys, followed by the
// body; the key order is Java's String.compareTo (UTF-16 code units), the
// values are UTF-8. For requests whose version is at most V4_9_3 (400,
// which includes the Go client's 317) the field _UNIQUE_KEY_QUERY is left
// out of the content, as Java does. The Go client does not sign its
// SecurityToken: its requests with a token fail on Java and here alike.
//
// A request is refused, with NO_PERMISSION (16) and Java's remark:
//
//	no AccessKey (or no ext fields)      "username cannot be null."
//	AccessKey names no user              "User:<name> is not found."
//	the user is disabled                 "User:<name> is disabled."
//	Signature missing or not the right   "check signature failed."
//
// The signature is compared in constant time (crypto/subtle). Requests
// whose code is in authenticationWhitelist are not checked. There is no
// timestamp or nonce in this scheme (none in Java either): a captured
// request can be replayed unchanged; any change to a field or the body
// fails. Responses are not signed.
//
// # Users file
//
// Java keeps users in RocksDB (LocalAuthenticationMetadataProvider);
// rocketd keeps them in <storePathRootDir>/config/users.json, replaced
// atomically (write users.json.tmp, fsync, rename, fsync the directory)
// on every change, before the change is visible:
//
//	{
//	  "version": 1,
//	  "users": [
//	    {"username": "rocketmq2", "password": "12345678", "userType": 1, "userStatus": 1}
//	  ]
//	}
//
// userType and userStatus are Java's codes (SUPER 1, NORMAL 2; ENABLE 1,
// DISABLE 2), as fastjson writes those enums; their names ("Super",
// "disable", any case) are read too. Users are sorted by name. The file
// holds the passwords in clear, as Java's store does (the HMAC needs
// them): keep the config directory private. A file that does not parse,
// a blank name or password, an unknown code or a name listed twice stops
// the start. At start the users named by initAuthenticationUser
// ({"username":..,"password":..}, made SUPER) and
// innerClientAuthenticationCredentials ({"accessKey":..,"secretKey":..},
// SUPER) are created unless a user of that name exists; an existing user
// is never overwritten by the configuration.
//
// Lookups read a copy-on-write map without locks; each user keeps a pool
// of HMAC states keyed with its password, so a check allocates nothing
// (BenchmarkAuthenticate).
package auth
