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
// # gRPC
//
// The gRPC MessagingService (internal/grpc) has no ext fields: the v5
// SDKs sign the x-mq-date-time header value and send (Java's
// DefaultAuthenticationContextBuilder.build(Metadata, ...))
//
//	authorization: MQv2-HMAC-SHA1 Credential=<ak>/..., SignedHeaders=x-mq-date-time, Signature=<hex HmacSHA1(password, date-time)>
//
// (x-mq-session-token, when sent, is not part of it). AuthenticateGRPC
// checks it with the same users and refusals as above, plus Java's
// header remarks: "datetime is null." (authorization without the
// date-time), "authentication header is incorrect." (no scheme),
// "authentication keyValues length is incorrect, actual length=1." (an
// item without "="), "create authentication context error." (a Signature
// that is not hex). No authorization header is "username cannot be
// null.". The date-time is not checked for freshness (nor in Java): a
// captured header can be replayed. authenticationWhitelist lists remoting
// codes and does not apply to gRPC. AuthorizeGRPC checks the resources
// internal/grpc lists for each request message (GRPCCheck) with the same
// ACLs as remoting requests.
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
//
// # Authorization
//
// With authorizationEnabled (which needs authenticationEnabled: Java
// would trust an unverified AccessKey) the same Guard then authorizes
// each request once, as RocketMQ 5.3's AuthorizationPipeline with the
// default provider. The request code gives what is needed
// (codeactions.go: Java's DefaultAuthorizationContextBuilder cases and
// the @RocketMQAction annotations of its request headers): a list of
// resources ("Topic:T", "Group:G", "Cluster:C") each with the actions of
// which one is needed. A send needs Pub on its topic (Sub on the group
// for a retry topic), a pull Sub on topic and group, a route lookup one
// of Pub/Sub/Get on the topic, an admin code its action on the topic,
// the group, or Cluster:<brokerClusterName>; a code Java neither
// switches on nor annotates is not checked, as in Java, except five
// where Java's gap lets a NORMAL user do too much: LITE_PULL_MESSAGE is
// checked as a pull, UPDATE_BROKER_CONFIG and
// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP need Create/Update on the cluster,
// GET_ALL_TOPIC_CONFIG and GET_ALL_SUBSCRIPTIONGROUP_CONFIG Get on it. Codes in
// authorizationWhitelist are not checked. A SUPER user passes; for a
// NORMAL user every resource must pass its ACL: of the entries of the
// CUSTOM policy that match the resource, one of the actions (or All) and
// the source address, the most specific resource decides (a literal
// name, then the longest prefix, then "Topic:*", then "*"; DENY on a
// tie); when no CUSTOM entry matches, the DEFAULT policy's decide the
// same way; no entry at all refuses. A refusal is NO_PERMISSION with
// Java's remark:
//
//	User:<name> has no permission to access <resource> from <ip>, no matched policies.
//	User:<name> has no permission to access <resource> from <ip>, the decision is deny.
//	parse authorization context error.     (a HEART_BEAT or LOCK body that does not parse)
//
// The check allocates nothing (BenchmarkGuardAuthorize: about 0.3 us
// on top of the signature check).
//
// # ACL file
//
// Java keeps ACLs in RocksDB (LocalAuthorizationMetadataProvider);
// rocketd keeps them in acls.json next to users.json, replaced atomically
// as users.json, one record per user in Java's AclInfo form (the admin
// requests' body), sorted by subject:
//
//	{
//	  "version": 1,
//	  "acls": [
//	    {"subject": "User:app", "policies": [
//	      {"policyType": "Custom", "entries": [
//	        {"resource": "Topic:orders", "actions": ["Pub", "Sub"], "sourceIps": ["10.0.0.0/8"], "decision": "Allow"},
//	        {"resource": "Topic:secret*", "actions": ["All"], "decision": "Deny"}]},
//	      {"policyType": "Default", "entries": [
//	        {"resource": "Group:*", "actions": ["Sub"], "decision": "Allow"}]}]}
//	  ]
//	}
//
// resource is "*", "<Type>:*", "<Type>:<name>" or "<Type>:<prefix>*"
// with Type Cluster, Namespace, Topic or Group; actions are All, Pub,
// Sub, Create, Update, Delete, Get, List; sourceIps (absent: any
// address) are IPv4/IPv6 addresses or CIDR ranges (Java 5.3 refuses ACL
// 1.0's "192.168.1.*" and "1-10" forms, so does rocketd); names are read
// in any case. An ACL's subject must be an existing user; creating an
// ACL that exists merges the policies (entries of the same resource are
// replaced), as Java's createAcl and updateAcl do. A file that does not
// parse or holds an invalid entry stops the start.
//
// # ACL 1.0 import
//
// migrateAuthFromV1Enabled imports plain_acl.yml at start (plainAclFile,
// else $ROCKETMQ_HOME/conf/plain_acl.yml and the .yml files under
// $ROCKETMQ_HOME/conf/acl, as Java) the way Java's AuthMigrator does
// (MigrateV1): accounts whose user exists are skipped, so a restart
// changes nothing; whiteRemoteAddress and globalWhiteRemoteAddresses are
// not imported (Java neither) and are logged.
package auth
