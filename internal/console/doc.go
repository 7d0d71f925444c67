// Package console is rocketd's built-in web console, a small
// rocketmq-dashboard: static pages (plain HTML, vanilla JS, CSS, embedded
// with embed.FS; charts are inline SVG drawn by the page's script) over a
// JSON API. Like the dashboard it is an admin client of the whole cluster:
// every answer comes from remoting calls to the NameServers and the
// brokers they list (internal/admin), never from the process's own state,
// so one console shows every broker group.
//
// # Turning it on
//
// broker.conf consoleEnable=true (rocketd serve: --console), listening on
// consoleListenAddr (--console-addr; default config.DefaultConsoleListenAddr,
// 127.0.0.1:8082). The broker starts it last and closes it first
// (broker.Shutdown step 0). It needs namesrvAddr. With
// tls.server.mode=enforcing it serves HTTPS with the tls.server.* keys;
// otherwise plain HTTP (a permissive port cannot tell HTTP from HTTPS).
// Its admin calls are signed with consoleAccessKey/consoleSecretKey when
// set, else, with authenticationEnabled, innerClientAuthenticationCredentials.
//
// # Pages (hash routes of index.html)
//
//	#cluster      brokers with runtime info; put/get msgs/s and CommitLog
//	              bytes/s charts from the sampler
//	#topics       list with filter; create (queue counts, cluster, order)
//	#topic/T      route (queue data, broker addresses), per-queue offsets,
//	              the groups consuming it
//	#groups       subscription groups of every master
//	#group/G      members, subscriptions, per-queue lag, reset offset by time
//	#messages     lookup by message id, by key, by topic+queue+offset:
//	              body (text, or base64 when not UTF-8; inflated when the
//	              compressed flag is set) and properties
//	#dlq          the last 50 messages per queue of %DLQ%G, each with re-send
//	#backlog      transaction half messages not yet checked, op records,
//	              timer messages held, the broker's timer* runtime keys
//
// # API (JSON; errors are {"error": "...", "code": <broker code>})
//
//	GET  /api/cluster                  brokers, addresses, runtime info
//	GET  /api/throughput               chart series per broker
//	GET  /api/topics                   topic names
//	GET  /api/topic?topic=             route, queue offsets, consuming groups
//	POST /api/topics                   {topic, cluster, readQueues, writeQueues, perm, order}
//	GET  /api/groups                   group names
//	GET  /api/group?group=[&topic=]    members, subscriptions, progress, totalLag
//	POST /api/group/reset              {group, topic, timestamp}: ms, -1 = the end
//	GET  /api/message?topic=&msgId=    offset message id, else UNIQ_KEY
//	GET  /api/messages?topic=&key=     by KEYS entry
//	GET  /api/message/at?topic=&queue=&offset=[&broker=]
//	GET  /api/dlq?group=               messages of %DLQ%group
//	POST /api/dlq/resend               {group, msgId, clientId?}
//	GET  /api/backlog                  per broker transaction and timer backlog
//
// Missing topics, messages or consumers are 404; other broker statuses
// and unreachable brokers 502; bad parameters 400.
//
// # Throughput
//
// A sampler goroutine (owned by the Server) reads every master's
// GET_BROKER_RUNTIME_INFO each SampleInterval (5 s) and keeps 120 samples
// per broker. Put/get msgs/s are the broker's putTps and getTransferedTps
// (the first of Java's "10s 60s 600s" figures) when it reports them, else
// the deltas of msgPutTotalTodayNow and msgGetTotalTodayNow (unknown, not
// 0, when a counter is absent, resets at midnight, or stays 0 while the
// CommitLog grows); CommitLog bytes/s is always the delta of
// commitLogMaxOffset.
//
// # DLQ re-send
//
// As rocketmq-dashboard (MessageServiceImpl.consumeMessageDirectly): the
// message is handed to one online consumer of the group with
// CONSUME_MESSAGE_DIRECTLY (the first member when none is named), which
// consumes it with its listener and reports a CMResult. Nothing is
// written to the original topic. (The Go client consumes such a message
// only for a topic it subscribes.)
//
// # Security
//
// The console has no login: it listens on loopback by default, and anyone
// who reaches it acts with the console's credentials. Keep it on loopback
// or behind an authenticating proxy.
//
//   - Write actions (create topic, reset offset, re-send) are POST only,
//     with Content-Type application/json and the header
//     X-Rocketd-Console: 1; a browser sends either cross-origin only after
//     a CORS preflight, which the console never answers. An Origin header
//     must name the console itself, and Sec-Fetch-Site, when sent, must be
//     same-origin.
//   - While listening on loopback, a Host that is not an IP literal or
//     localhost is refused (421): DNS rebinding.
//   - Every answer carries a Content-Security-Policy (scripts and styles
//     from the console only), X-Frame-Options DENY and nosniff; the page
//     puts server data in the DOM as text only.
//   - Limits: header read 5 s, whole request 10 s, 16 KiB of headers,
//     64 KiB of body (413 beyond), queue counts 1..1024, topic and group
//     names of RocketMQ's character set. A bad request gets a 4xx; it never
//     reaches a broker.
package console
