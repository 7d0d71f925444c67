// Package remoting speaks RocketMQ's remoting protocol: the frame and header
// codecs, a TCP Server that routes requests by code to handlers run by
// bounded worker pools, and a Client with one pooled connection per
// address. Both ends correlate responses by opaque and can receive requests
// from the other side over the same connection. The facts come from
// rocketmq-spec.md §1-§2 and go-client-wire.md §1.
//
// # Frame
//
// All integers are big-endian. One TCP stream carries a sequence of frames:
//
//	0        4        8                     8+H                 4+L
//	+--------+--------+---------------------+--------------------+
//	| length | T | H  | header (H bytes)    | body               |
//	+--------+--------+---------------------+--------------------+
//	  int32   1 byte T = serialize type (0 JSON, 1 ROCKETMQ)
//	          3 bytes H = header length (mask 0x00FFFFFF)
//
//	length = 4 + H + len(body)   (the bytes after the length field)
//
// The limit MaxFrameSize (default 16 MiB) counts the whole frame, length
// field included, and is checked before the frame buffer is allocated. A
// length below 4 or above the limit, H > length-4, an unknown T or an
// undecodable header closes the connection without a response (Java does the
// same). DecodeFrame takes a frame without its length field.
//
// # JSON header (T = 0)
//
// fastjson's output: properties in alphabetical order, null ones omitted.
//
//	{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA",
//	 "opaque":3,"remark":"...","serializeTypeCurrentRPC":"JSON","version":409}
//
// code, flag, opaque, version are JSON numbers; language is the enum name;
// every extFields value is a JSON string (the Go client rejects a response
// whose extFields hold a number). We write extFields keys sorted and omit
// remark when empty and extFields when nil, so equal commands encode to equal
// bytes. Decoding is lenient: any property order, unknown properties
// skipped, language as name or number (unknown -> OTHER), numbers given as
// strings, null for any property, extFields values that are numbers,
// booleans, objects or arrays kept as their JSON text (null values dropped).
// serializeTypeCurrentRPC is ignored: the frame's T byte is authoritative.
//
// # ROCKETMQ binary header (T = 1)
//
//	0      2    3       5        9        13           17
//	+------+----+-------+--------+--------+------------+--------+
//	| code |lang|version| opaque |  flag  | remarkLen R| remark |
//	+------+----+-------+--------+--------+------------+--------+
//	 int16  u8   int16   int32    int32    int32        R bytes
//	+-------------+----------------------------------------------+
//	| extLen E    | E bytes of entries:                          |
//	|  int32      |   keyLen int16, key, valLen int32, value ... |
//	+-------------+----------------------------------------------+
//
// Fixed part 21 bytes (17 + extLen). R = 0 means no remark, E = 0 no
// extFields; entries are read until E bytes are consumed. code and version
// must fit int16 (5.x POP codes cannot travel this way: encoding them fails
// with ErrNotEncodable). Negative lengths and lengths past the header are
// errors. We write entries in key order.
//
// # Custom header forms
//
// A Command's custom header is one of: the ExtFields map; a typed Header
// (protocol.ExtEncoder) that the encoders write straight into the frame,
// keys in the same ascending byte order as a map's, so the bytes are the
// same; or, for a received command, the compact form. Requests whose
// handler was registered with Server.HandleLazyExt, and responses to a
// Client with LazyResponseExt, keep their fields as they arrived instead
// of filling a map: one string of entries in the ROCKETMQ entry layout
// (keyLen int16, key, valLen int32, value), JSON values unescaped, nulls
// left out, repeated keys kept (the last wins on lookup, as in a map). A
// ROCKETMQ header's entries are used where they lie in the header copy; a
// JSON header's are transcoded into one buffer. The syntax is checked
// exactly as for the map, so a bad header still closes the connection.
// Command.LookupExt reads several keys in one pass (protocol.ExtSource,
// used by SendMessageRequestHeader.DecodeFrom); Ext builds the map on
// demand. For JSON the decoder must choose at the extFields property,
// which fastjson writes before flag: it guesses by the side (a server
// expects requests, a lazy client responses) and builds the map
// afterwards if the guess was wrong.
//
// # Flags and correlation
//
// flag bit 0 = response, bit 1 = oneway. A requester numbers its requests
// with its own counter (per Client, per Server) and keeps opaque -> waiter
// per connection; the response echoes the opaque and is matched only by
// it, so responses may come back in any order. Unmatched responses are
// dropped. A oneway request is never answered, not even with an error. A
// response travels in the serialization of its request; so do the replies
// the transport makes itself (SYSTEM_BUSY, REQUEST_CODE_NOT_SUPPORTED,
// SYSTEM_ERROR), where Java would use JSON: both are valid for every
// client, which decodes each frame by its T byte.
//
// # TLS
//
// A server's TLSListener applies RocketMQ's tls.server.mode to each
// accepted connection before any frame is read. The first byte is peeked
// (recv MSG_PEEK: not consumed), as Java's TlsModeHandler looks at it: 0x16,
// the record type of a ClientHello, starts a TLS handshake (at most 10 s);
// anything else is a plaintext frame's length.
//
//	mode        first byte 0x16        other first byte
//	disabled    closed (bad length)    plaintext
//	permissive  TLS                    plaintext
//	enforcing   TLS                    closed
//
// The peek waits at most IdleTimeout, off the accept loop; Shutdown closes
// connections still undecided. A Client with ClientConfig.TLS sets up
// every connection with a handshake within DialTimeout. A plaintext
// connection stays the plain socket (with its direct-write path); a TLS
// one goes through crypto/tls, its writes always by the writer goroutine.
//
// # Design
//
// Goroutines. Each connection has a reader for its lifetime and a writer
// while frames wait to be written. The reader decodes frames from a 64 KiB
// read buffer, hands responses to the waiting call and requests to
// dispatch. The writer owns the socket's write side; the sender that leaves
// frames in an empty pending buffer starts it when none runs, and it ends
// once it finds nothing more to write (starting a goroutine costs about
// what waking a parked one did). The reader is started by the Server (per
// accepted connection) or the Client (per dialled address); both are
// counted in its WaitGroup; Conn.Close, a read or write error or the idle
// timeout ends them, and the reader then fails every pending call with
// ErrConnClosed and runs the close callbacks.
//
// Idle connections. A connection with nothing to read holds no read buffer:
// on a socket the reader reads through its RawConn, and a read that finds
// the socket empty gives the empty buffer back to a pool shared by all
// connections before it waits, taking one again when bytes arrive (TLS
// connections read through crypto/tls and keep theirs). With no writer
// goroutine and small kept write buffers, an idle connection costs about
// 6 KiB, most of it the reader's stack, where a bufio.Reader and a parked
// writer made it 77 KiB (BenchmarkIdleConn, TestIdleConnMemory; issue 18).
// Handlers run on their Family's fixed workers (started by Start, stopped
// by Shutdown) or, for Handle with a nil family, inline on the reader.
// Client-side handlers and async callbacks each get a goroutine counted in
// the Client's WaitGroup, so Client.Close waits for them; InvokeAsyncInline
// runs its callback on the goroutine that settles the call instead (the
// reader, the expiry timer), for callers whose callbacks never block.
//
// Read batching. The reader decodes every whole frame its buffer holds
// before it hands the requests over, up to 64 at a time: a pipelining
// peer's burst, delivered by one socket read, is queued to its family
// under one lock with one round of worker wake-ups, in arrival order (an
// inline handler runs once the requests before it are queued). A request
// whose successor has not fully arrived is handed over before the reader
// waits for more, so a lone request is never held back.
// Conn.Handling tells a handler how many of its connection's requests are
// queued or running (the send path lets the store gather their writes).
//
// Write coalescing. Senders (handlers, callers) encode their frame into a
// pooled scratch buffer without any lock, then copy it into the
// connection's pending buffer under a mutex and start the writer if the
// buffer was empty (a frame with a body of 32 KiB or more is encoded
// straight into the pending buffer instead: one copy of the body, not two).
// A body of 16 KiB or more given as BodyParts with a Release (a pull
// response's records in the store's read buffers) is not copied at all on
// a plain TCP socket: its frame head goes into the pending buffer, the
// pending buffer notes where the parts go, and the writer writes the lot
// with one writev (net.Buffers), calling Release once the write returned
// (Close releases the frames it drops). Over TLS the parts are copied as
// before: crypto/tls encrypts from one buffer. Below 16 KiB copying costs
// no more than the iovec entries (BenchmarkPullResponse). The writer yields (runtime.Gosched) so that the
// goroutines about to send can add their frames, and keeps yielding while
// that makes the buffer grow (up to 3 times, 256 KiB); then it swaps the
// pending buffer for its spare and writes it with one syscall. Whatever
// queues meanwhile goes out with the next write. In the loopback benchmark
// a write carries about eight frames; a lone frame still leaves at once (a
// yield costs nothing when nobody else is runnable; BenchmarkInvokeLatency).
//
// Writing on the sender's goroutine. A family worker whose response is the
// last its family will produce for now (no other worker busy, queue empty)
// writes it itself when the connection's writer is idle and nothing is
// queued: one non-blocking write (RawConn), no writer wake-up, no gathering
// yields. It holds the write side as the writer does (busy), so frames
// queued meanwhile wait behind it; what the kernel did not take (a full
// socket buffer) is put at the head of the pending buffer for the writer,
// so the worker never blocks on a slow peer.
//
// Back-pressure. A family's queue is bounded: when full, the reader answers
// SYSTEM_BUSY ("[OVERLOAD]...") immediately, for each request of a batch
// that found no room, rather than block the connection
// (oneway requests are dropped). A connection's pending write buffer is
// bounded too (4 MiB): a sender finding it full waits until the writer
// drains it, so a peer that does not read stalls its own handlers only.
// The reader checks each frame's length against MaxFrameSize before it
// allocates anything, and never allocates for bytes that have not arrived
// (see Frame memory).
//
// Frame memory. A frame that fits in the 64 KiB read buffer is decoded in
// place once it has all arrived. A larger one is assembled in a buffer that
// grows with the bytes actually received: nothing is allocated until the
// read buffer is full of the frame; then a buffer of at most twice that
// takes over and is doubled each time it fills, its sizes being the frame's
// length halved k times, k-1 times, ..., once, so that the last doubling
// ends exactly at the length. The buffer is never more than twice the bytes
// received, so a peer announcing a 16 MiB frame and sending a few bytes
// (Slowloris) costs its read buffer only, not 16 MiB. A large frame that
// does arrive pays about one extra copy of itself over the doublings, and
// as much again in garbage (BenchmarkLargeRequest).
//
// Slice lifetimes. A received Command's Body is a buffer of its own that
// belongs to whoever receives the Command (handlers may keep it): a frame
// decoded in the read buffer has its body copied out (a frame without a
// body then costs no buffer); a larger one's Body aliases the buffer it
// was assembled in, which nothing reuses. The exception is a Client with
// PooledResponseBodies: a response body of 4 to 64 KiB lies in a buffer of
// the read buffers' process-wide pool (the read buffer itself, handed over
// when less follows the frame than its body holds, else a copy), and the
// caller hands it back
// with Command.ReleaseBody when done (one never handed back is garbage as
// usual); a consumer reading ~33 KiB pull responses tens of thousands of
// times a second otherwise spends a third of its CPU on the GC's sweeping
// and the scheduler's locks. The server does the same for the requests of
// a route registered with LentBody (the send codes): a body of 16 to 64
// KiB (a producer's batch) lies in a pooled buffer that the server hands
// back once the handler returned, which must therefore have copied
// whatever it keeps (the store copies records into its ring before a put
// returns). The 16 KiB floor bounds what queued requests hold to 4x their
// bodies. Header strings (remark,
// extFields values) do not alias the frame: they are cut from one string
// copy of the header, so keeping one small value keeps that header copy
// (a few hundred bytes) alive; strings.Clone a value before storing it in
// a long-lived table.
// AppendFrame copies the body into the write buffer, so a sender may reuse
// its Command and Body as soon as the send call returns; BodyParts with a
// Release only once Release was called (they may be written from where
// they are, after the send call returned).
//
// Locks. Conn has two (the write buffer; the pending-call table), Server
// and Client one each (connections, configuration); none is ever taken
// while another is held, and none is held across a socket read or write.
//
// Idle connections. As Java's IdleStateHandler with allIdle, a connection
// is idle when for IdleTimeout no byte was read from it and nothing was
// written to it. Every read that returns bytes counts, a few bytes inside a
// frame as much as a whole frame: a large frame sent slowly but steadily
// keeps its connection; a peer that stops sending, between frames or
// inside one, is closed IdleTimeout after its last byte. A connection
// waiting on a long poll (nothing sent either way) is idle like any other:
// it lives until IdleTimeout after the request or the last traffic since,
// as in Java, whose push consumers ask for pulls held 15 s at most against
// the 120 s default. The read deadline is moved lazily: when it fires, the reader
// looks at the times of the last read and the last write and either moves
// the deadline to IdleTimeout after the later one or, after one last read
// with a 10 ms deadline (bytes may be waiting that a reader the machine did
// not schedule in time has not seen), closes the connection. So a
// connection is closed IdleTimeout after its last activity, plus 10 ms and
// timer and scheduling latency. The write deadline (same length) is moved
// once half of it is used up, so a write blocked by a peer that does not
// read fails after between half and all of IdleTimeout. Only the writer's
// blocking writes move it: a write on the sender's goroutine that finds
// it passed hands its frame to the writer, which moves it, rather than
// failing the connection.
//
// Close reasons. Every connection, closed by either side for whatever
// reason, logs one line when its reader ends: "remoting: connection
// closed" with by=peer (end of stream, reset, broken pipe) or by=here (the
// idle timeout, a bad frame, a write that failed or timed out, Close,
// Shutdown) and the reason. Debug level, the idle timeout info; at most
// one line a second per Server or Client for each side, the next line
// counting those held back (suppressed_since_last), so many connections
// closing at once do not flood the log.
//
// Guard and BeforeRequest. A Server's Guard (SetGuard) runs before each
// handler, on the goroutine that runs the handler, and may refuse the
// request with a response of its own (authentication: NO_PERMISSION); a
// Client's BeforeRequest runs on every request it sends just before the
// request is encoded (signing), as Java's RPCHook does.
//
// Shutdown. Server.Shutdown closes the listener, answers new requests with
// SYSTEM_BUSY, waits for the accepted requests to finish and their responses
// to be written (bounded by ctx), then closes the connections and stops the
// workers. A deferred reply (nil from the handler) is not waited for.
package remoting
