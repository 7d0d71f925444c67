// Package namesrv is rocketd's NameServer: the route table brokers register
// into and clients read topic routes from, its remoting processors, and the
// KV configuration store. It follows RocketMQ 4.9.8's RouteInfoManager,
// DefaultRequestProcessor and KVConfigManager (rocketmq-spec.md §3.6, §4).
//
// # What the route table holds
//
//	topics    topic       -> brokerName -> QueueData{read, write, perm, sysFlag}
//	brokers   brokerName  -> BrokerData{cluster, brokerName, brokerAddrs{brokerId -> addr}}
//	clusters  clusterName -> {brokerName}
//	live      brokerAddr  -> {lastUpdate, dataVersion, haServerAddr, connection}
//
// Nothing of it is persisted: brokers register every 30 s and a restarted
// name server is complete again after one round.
//
// # Registration rules (REGISTER_BROKER)
//
//   - The broker name joins its cluster; its BrokerData is created if new.
//   - Another brokerId entry with the same address is dropped first (a
//     slave that became master, or the reverse, is listed once).
//   - Queue data comes from masters (brokerId 0), and is rebuilt only
//     when the registered DataVersion differs from the one last seen for that
//     address, or on the group's or id's first registration. A slave's topic
//     configs are ignored while its group has a master. Without one, the
//     slave with the lowest id speaks for the group (Java 5.x's "prime
//     slave"; 4.9.8 ignores slaves always): its topics are applied as a
//     master's are, except that with an unchanged DataVersion only topics
//     the group has no queue data for are added. So a topic whose master
//     registration never reached this name server (the master died first,
//     or the name server started after it) is still routed to the slave
//     that serves it; a rocketd slave copies new topics from its master
//     within a second and re-registers on every change of its table.
//   - A slave is answered with its master's address and HA address when the
//     master is registered.
//   - A non-zero bodyCrc32 must equal the masked CRC32 (IEEE & 0x7FFFFFFF) of
//     the body bytes as received (compressed when compressed=true), otherwise
//     SYSTEM_ERROR "crc32 not match" and nothing changes.
//   - The answer's body is the KVTable of namespace ORDER_TOPIC_CONFIG, or
//     empty when that namespace does not exist.
//
// # Configuration (GET_NAMESRV_CONFIG, UPDATE_NAMESRV_CONFIG)
//
// GET_NAMESRV_CONFIG renders the current settings (tls.* and
// authentication left out). UPDATE_NAMESRV_CONFIG changes the live keys
// orderMessageEnable, scanNotActiveBrokerInterval and
// brokerChannelExpiredTime, and writes them to configStorePath (the -c
// file); other keys are refused (see config.Runtime, processor_config.go).
//
// # Expiry rules
//
//   - A scan runs ScanNotActiveBrokerDelay (5 s) after Start, then every
//     ScanNotActiveBrokerInterval (10 s). A broker address whose last
//     registration is older than BrokerChannelExpiredTime (120 s) is removed
//     and its connection closed. QUERY_DATA_VERSION with an unchanged
//     version also counts as a refresh. Both the interval and the expiry
//     time may change at run time (UPDATE_NAMESRV_CONFIG, below): the scan
//     reads them each round.
//   - When a connection closes, every broker whose latest registration came
//     on it is removed at once (a broker that has re-registered on a newer
//     connection is kept).
//   - Removing an address removes it from its group; a group with no member
//     left leaves every cluster that lists it and loses its queue data, and a
//     topic with no queue data left is gone. UNREGISTER_BROKER removes one
//     (name, id) entry with the same cascade (Java removes the group only
//     from the cluster the request names; we never list a group that no
//     longer exists).
//   - A registration processed after its connection closed (it waited in
//     the worker queue) is dropped again at once. A group whose master left but whose slave
//     remains keeps its queue data: consumers can still read from the slave.
//
// # Route answers (GET_ROUTEINFO_BY_TOPIC)
//
// queueDatas and brokerDatas are sorted by broker name. When the topic has no
// queue data, or none of its groups is known, the answer is TOPIC_NOT_EXIST
// with remark "No topic route info in name server for the topic: <topic>".
// With orderMessageEnable, orderTopicConf is the topic's ORDER_TOPIC_CONFIG
// value.
//
// brokerAddrs key quoting: the map key is a Java Long. For a request whose
// version is >= 401 (V4_9_4) or whose header has acceptStandardJsonOnly=true
// the body is standard JSON, {"0":"10.0.0.1:10911"}; for every other request
// it is fastjson's legacy form with unquoted keys, {0:"10.0.0.1:10911"}.
// rocketmq-client-go sends version 317 and so always gets the legacy form;
// its parser also breaks on any whitespace in the object, so the body is
// compact. GET_BROKER_CLUSTER_INFO is always legacy, as in Java.
//
// # KV configuration file
//
// kvConfig.json, default $HOME/namesrv/kvConfig.json, compact JSON:
//
//	{"configTable":{"<namespace>":{"<key>":"<value>",...},...}}
//
// Written through vfs.FS on every change with the .tmp/.bak/rename protocol
// (see KVStore);
// read back leniently (fastjson's pretty form and unquoted keys are accepted),
// falling back to kvConfig.json.bak.
//
// # Authentication
//
// Java's NameServer authenticates nothing. With authenticationEnabled=true
// in namesrv.conf (or Config.Authenticator, as rocketd serve sets) every
// request, REGISTER_BROKER included, must be signed by an enabled user of
// users.json next to kvConfigPath (internal/auth): a forged registration
// is refused with NO_PERMISSION before it reaches the route table.
// Brokers sign with their innerClientAuthenticationCredentials, which must
// name a user here; clients sign route queries with their credentials, or
// authenticationWhitelist=105 lets unsigned route queries through.
// authorizationEnabled=true applies the ACLs of acls.json next to
// users.json as the broker does (route queries need Pub, Sub or Get on
// the topic); cluster-wide codes without a clusterName field are checked
// on "Cluster:" with an empty name, which only "Cluster:*" or "*" grants
// (a NameServer belongs to no cluster).
//
// Unknown request codes are answered REQUEST_CODE_NOT_SUPPORTED (3) with
// remark " request type <code> not supported" (RocketMQ 5.x behaviour;
// 4.9.8's name server never answers them). Requests missing a required
// header field or carrying an undecodable body are answered SYSTEM_ERROR
// with a remark naming the problem; they never change the table.
package namesrv
