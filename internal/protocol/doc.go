// Package protocol holds RocketMQ's remoting vocabulary: request and response
// codes, the typed custom headers carried in a command's extFields, and the
// JSON bodies in the shapes Java's fastjson writes and reads.
//
// It knows nothing of sockets (that is package remoting, which imports this
// one, never the reverse) and nothing of the store. rocketmq-spec.md §2-§4
// and go-client-wire.md hold the facts encoded here.
//
// # Custom headers (extFields)
//
// A header is a flat map string -> string (rocketmq-spec.md §3.1). Every
// header type has
//
//	func (h *X) AppendExt(ext map[string]string)   // write into a command's extFields
//	func (h *X) Decode(ext map[string]string) error // read from them
//
// and Ext(h) returns a fresh map. The rules, which are Java's:
//
//   - Keys are the Java field names of the header class (e.g. "queueId",
//     "suggestWhichBrokerId", "clientID", "bname"), not getter names.
//   - Numbers are decimal text, booleans "true"/"false". Booleans decode as
//     Java's Boolean.parseBoolean: "true" in any letter case is true, any
//     other text false, never an error.
//   - Null fields are omitted. Required fields are always written; optional
//     strings only when non-empty; Optional[T] values only when Set.
//     Optional[T] is used where Java has a wrapper type whose absence changes
//     behaviour (maxReconsumeTimes, reconsumeTimes, unitMode and batch of the
//     send header, ...).
//   - On decode a missing key leaves the zero value (Java does not enforce
//     @CFNotNull at decode time), unknown keys are ignored, and an
//     unparseable number is a *FieldError: callers answer SYSTEM_ERROR with
//     its text, as Java's FastCodesHeader decoders do.
//   - Decoding does not allocate (strings are shared with the map): it runs
//     on the send and pull paths.
//
// # Adding a header
//
// A header that is pure data (each field one key, read and written with
// the rules above) is declared once, as a struct whose fields carry ext
// tags; go generate writes its AppendExt and Decode into zz_headers_gen.go:
//
//	// FooRequestHeader is FOO (1234).
//	type FooRequestHeader struct {
//		ConsumerGroup string          `ext:"consumerGroup"`
//		QueueID       int32           `ext:"queueId"`
//		AttemptID     string          `ext:"attemptId,opt"`       // omitted when empty
//		Order         bool            `ext:"order"`
//		MaxMsgBytes   Optional[int32] `ext:"maxMsgBytes"`         // omitted when unset
//		BrokerID      int64           `ext:"brokerId,default=-1"` // absent reads as -1
//	}
//
// then run
//
//	go generate ./internal/protocol
//
// and commit the regenerated file with the struct (TestGeneratedHeadersCurrent
// fails on a stale one; on a merge conflict in it, take either side and run
// go generate again). The tag is the Java field name; ",opt" on a string
// or bool omits the empty string or false; field types are string, bool,
// int32, int64, Optional[int32|int64|bool] and named types of those (such as
// TopicFilterType). Decode reads fields in declaration order (the first bad
// number is the *FieldError) and names the struct in the FieldError unless
// the doc comment ends with "//ext:header JavaClassName"; "//ext:encoder"
// generates the ExtEncoder methods too. Package internal/headergen has the
// details. Every field of a tagged struct must be tagged.
//
// Headers that are not pure data keep hand-written methods and no tags:
// SendMessageRequestHeader (two key spellings, V1 and V2, and the
// single-pass ExtSource decoder of the send path) and
// DeleteSubscriptionGroupRequestHeader (one field written under two keys,
// removeOffset and cleanOffset, read as either).
//
// The send path skips the map both ways. ExtSource (LookupExt: several
// keys in one pass) is how SendMessageRequestHeader.DecodeFrom reads a
// received remoting.Command's header as it arrived; DecodeFor on a map is
// the same decoder over MapExt, so both give the same header and the same
// *FieldError. ExtEncoder (AppendExtJSON, AppendExtBinary, written with an
// ExtWriter) puts a typed header straight into a frame, entries in
// ascending byte order of their keys as the remoting encoders sort a
// map's, so the frame is byte for byte the one the map gives:
// SendMessageRequestHeader (long keys), its V2() (letters) and
// SendMessageResponseHeader implement it.
//
// SendMessageRequestHeader has two spellings, one struct:
//
//	V1 key                 V2 key   V1 key                V2 key
//	producerGroup          a        properties            i
//	topic                  b        reconsumeTimes        j (optional)
//	defaultTopic           c        unitMode              k (optional)
//	defaultTopicQueueNums  d        maxReconsumeTimes     l (optional)
//	queueId                e        batch                 m (optional)
//	sysFlag                f        bname                 n (optional)
//	bornTimestamp          g
//	flag                   h
//
// SEND_MESSAGE (10) and SEND_REPLY_MESSAGE (324) carry V1; SEND_MESSAGE_V2
// (310), SEND_BATCH_MESSAGE (320) and SEND_REPLY_MESSAGE_V2 (325) carry V2
// (DecodeFor picks by code). The Go client sends single messages with V1 and
// batches with V2.
//
// Java's long-form decoder does refuse a missing @CFNotNull key ("the
// custom field <key> is null"; V2's fast decoder only logs it):
// MissingSendField names the first of the eight required send keys (a..h)
// a request lacks, for the reply path, which answers it SYSTEM_ERROR.
//
// PUSH_REPLY_MESSAGE_TO_CLIENT (326, broker to the requesting producer)
// carries ReplyMessageRequestHeader: the reply's send header in long keys
// (producerGroup ... properties, reconsumeTimes optional, unitMode) plus
// bornHost and storeHost ("ip:port") and storeTimestamp (ms); the body is
// the reply's body as sent.
//
// # Slave metadata copy (rocketd extension)
//
// A rocketd slave polls its master's tables often (every 500 ms) and adds
// to GET_ALL_TOPIC_CONFIG (21), GET_ALL_CONSUMER_OFFSET (43),
// GET_ALL_DELAY_OFFSET (45) and GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201) the
// version of the master's table it last applied (SlaveSyncRequestHeader):
//
//	rocketdKnownStamp, rocketdKnownCount   request; both absent on a first copy
//	rocketdStamp, rocketdCount             response; the version the answer reflects
//	rocketdUnchanged=true                  response; the slave is current, body empty
//	rocketdDelta=true                      response (43 only); body holds only the
//	                                       "topic@group" entries changed since
//
// Versions: topics and groups, their DataVersion (timestamp, counter);
// consumer offsets, the table's epoch (ns at open) and change count;
// delay offsets, 0 and the CRC32 of the delayOffset.json text. The key
// names are not Java's (5.x's paged GET_ALL_TOPIC_CONFIG uses dataVersion,
// topicSeq, maxTopicNum, which rocketd ignores and answers in full, without
// totalTopicNum, so a Java slave takes the one page). Java ignores unknown
// keys both ways: a Java slave gets full answers, and a rocketd slave that
// sees no rocketdStamp in an answer knows its master answers in full and
// polls at Java's 10 s instead.
//
// # JSON bodies (fastjson compatibility)
//
// Writers (MarshalFastJSON, MarshalFastJSONStyle, MarshalFastJSONPretty)
// produce what fastjson 1.2.x produces with its default features:
//
//   - compact: no whitespace at all (the Go client's route parser breaks on a
//     space after a colon);
//   - properties sorted by name, taken from the `json` tags of the Go types
//     (declaration order does not matter);
//   - nulls omitted: nil pointers always, and empty values of ",omitempty"
//     fields; a nil slice or map without omitempty is written as [] or {}
//     (queueDatas, brokerAddrs, filterServerTable must be present);
//   - enums as their names ("CLUSTERING", "SINGLE_TAG"): Go string types;
//   - doubles as Java prints them (1.0, 1.5E10).
//
// Maps with non-string keys are where fastjson is not JSON. Two styles:
//
//	JSONLegacy (fastjson defaults)       JSONStandard (BrowserCompatible)
//	{0:"10.0.0.1:10911"}                 {"0":"10.0.0.1:10911"}
//	{{"brokerName":"b",...}:5}           {"{\"brokerName\":\"b\",...}":5}
//	"é/"  (UTF-8, '/' as is)             "\u00e9\/"  (>= 0x7F as \uXXXX UTF-16 units)
//	9007199254740993                     "9007199254740993" (|n| > 2^53-1 quoted)
//
// Integer keys sort numerically, string keys lexically. Control characters
// are \b \f \n \r \t or \u00XX in both styles. The name server answers
// GET_ROUTEINFO_BY_TOPIC with JSONStandard when the request version is >=
// V4_9_4 (401) or acceptStandardJsonOnly=true
// (GetRouteInfoRequestHeader.WantsStandardJSON), JSONLegacy otherwise: the
// Go client sends version 317 and gets the legacy form. ClusterInfo is
// always legacy.
//
// The pretty form (config files such as consumerOffset.json, §4.1) indents
// with one tab per level; each property and string-keyed entry starts a new
// line as "key":value; integer-keyed entries stay on the opening line; a
// non-empty object, map or array closes on a new line at the opener's
// indent:
//
//	{
//		"offsetTable":{
//			"TopicTest@group":{0:250,1:250
//			}
//		}
//	}
//
// The reader (UnmarshalFastJSON) first rewrites fastjson text as standard
// JSON (NormalizeFastJSON) and then uses encoding/json. The rewrite quotes
// bare integer and identifier keys, turns an object or array in key position
// into a string holding its compact JSON text (so a key type with
// UnmarshalText, like MessageQueue, can parse it), drops whitespace, and
// copies strings and numbers unchanged for encoding/json to validate.
// Nesting is limited to 1000 levels. Types whose Java class has field
// initialisers (TopicConfig, SubscriptionGroupConfig) start decoding from
// those defaults, so absent properties read as Java reads them.
// SubscriptionData.codeSet accepts numbers (Java) and numeric strings (the
// Go client).
//
// # Server-side rebalance bodies (5.x, body_assignment.go)
//
//	QUERY_ASSIGNMENT (400) request
//	{"clientId":"10.0.0.1@123#456","consumerGroup":"g","messageModel":"CLUSTERING",
//	 "strategyName":"AVG","topic":"T"}
//	answer: {"messageQueueAssignments":[{"messageQueue":{"brokerName":"b",
//	 "queueId":0,"topic":"T"},"mode":"PULL"}]}, or {} (Java null: keep
//	 the current queues; an empty list means drop them all)
//	SET_MESSAGE_REQUEST_MODE (401) request
//	{"consumerGroup":"g","mode":"POP","popShareQueueNum":0,"topic":"T"}
//
// The decoders (DecodeQueryAssignmentRequestBody,
// DecodeSetMessageRequestModeRequestBody; fuzzed) fail with
// ErrAssignmentBody and the field named for no body, text that is not
// JSON, a missing topic or consumerGroup, a messageModel other than
// CLUSTERING / BROADCASTING, or a mode other than PULL / POP (absent:
// PULL). LITE_PULL_MESSAGE (361) carries PullMessageRequestHeader.
//
// TopicConfig, SubscriptionGroupConfig and the topics.json and
// subscriptionGroup.json wrappers keep the properties they do not model
// (UnknownMembers, matched case-insensitively as encoding/json matches) in
// the compact writer's form, and the writer emits them among the modelled
// ones in name order. A type implementing defaultOmitter leaves out
// properties holding Java's default (the 5.x group properties). Empty
// attributes and subscriptionDataSet read as absent, since both are
// written as absent.
//
// # Compressed REGISTER_BROKER body (§4.4)
//
// With header compressed=true the body is a zlib stream (deflate with zlib
// header, best compression) of, all integers big-endian int32:
//
//	+--------+-------------------------+
//	| len    | DataVersion JSON        |   {"counter":3,"timestamp":...}
//	+--------+-------------------------+
//	| count  |                             number of topics
//	+--------+-------------------------+
//	| len    | "name r w perm filter"  |   x count, e.g. "TopicA 4 4 6 SINGLE_TAG"
//	+--------+-------------------------+
//	| len    | filter servers JSON     |   ["host:port",...]
//	+--------+-------------------------+
//
// topicSysFlag and order do not travel in this form. The decoder never
// allocates by a claimed length (buffers grow with the bytes actually
// inflated) and stops at 256 MiB inflated. bodyCrc32 in the header is
// BodyCRC32 of the body bytes as sent (after compression).
package protocol

//go:generate go run ./internal/headergen/cmd
