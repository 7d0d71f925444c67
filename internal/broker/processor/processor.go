package processor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"

	"github.com/rocketd/rocketd/internal/auth"
	"github.com/rocketd/rocketd/internal/broker/client"
	"github.com/rocketd/rocketd/internal/broker/longpoll"
	"github.com/rocketd/rocketd/internal/broker/meta"
	"github.com/rocketd/rocketd/internal/broker/pop"
	"github.com/rocketd/rocketd/internal/broker/stats"
	"github.com/rocketd/rocketd/internal/broker/timer"
	"github.com/rocketd/rocketd/internal/broker/txn"
	"github.com/rocketd/rocketd/internal/config"
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
	"github.com/rocketd/rocketd/internal/store"
)

// Deps are the broker services the processors work on. The broker owns
// them (starts and closes them); the processors only call into them.
type Deps struct {
	Config *config.BrokerConfig // read only: the configuration at start
	// Live holds the keys UPDATE_BROKER_CONFIG changes (config.Runtime);
	// handlers read those through it. Nil: a Runtime over Config that does
	// not persist (tests of the handlers alone).
	Live    *config.Runtime[config.BrokerConfig]
	Store   *store.Store
	Topics  *meta.Topics
	Groups  *meta.Groups
	Offsets *meta.Offsets
	Clients *client.Registry
	// Holder keeps pulls that found nothing (long polling). Nil disables
	// holding: such pulls are answered PULL_NOT_FOUND at once.
	Holder *longpoll.Holder
	// StoreHost is brokerIP1:listenPort, the host of offset message ids.
	StoreHost netip.AddrPort
	// InMemoryBytes mirrors store.Config.InMemoryBytes (0: every message
	// counts as in memory); QUERY_CONSUMER_OFFSET's rule for a new group
	// depends on it (rocketmq-spec.md §13.3).
	InMemoryBytes int64
	// SendHooks observe every send request (Java's SendMessageHook:
	// tracing, metrics, auditing), in order.
	SendHooks []SendHook
	// SentToDLQ, when set, is told of each message a consumer's send back
	// (or a %RETRY% send past its reconsume times) stored in group's DLQ;
	// topic is the consumed topic as Java labels it
	// (rocketmq_send_to_dlq_messages_total). It must not block.
	SentToDLQ func(group, topic string)
	// Txn serves half messages and END_TRANSACTION. Nil: transactional
	// sends are refused with NO_PERMISSION.
	Txn *txn.Service
	// RequestModes keeps SET_MESSAGE_REQUEST_MODE's modes. Nil: that code
	// is refused with SYSTEM_ERROR and QUERY_ASSIGNMENT uses the default
	// mode.
	RequestModes *meta.RequestModes
	// Mappings keeps the static topics' queue mappings. Nil:
	// UPDATE_AND_CREATE_STATIC_TOPIC is refused with SYSTEM_ERROR.
	Mappings *meta.Mappings
	// TopicRoute, when set, looks a topic's route up on the NameServer:
	// QUERY_ASSIGNMENT splits the queues of every broker of the topic.
	// found is false for a topic the NameServer does not know. Nil: the
	// broker is the whole cluster (its own topic config is the route).
	TopicRoute func(ctx context.Context, topic string) (route protocol.TopicRouteData, found bool, err error)
	// AwaitRegistration, when set, returns once a NameServer registration
	// round that started after the call has ended (or ctx is done).
	// UPDATE_AND_CREATE_TOPIC waits for it, as Java's registers the topic
	// before it answers: a topic acknowledged to the admin is routed even
	// if the master dies at once.
	AwaitRegistration func(ctx context.Context) error
	// Forward, when set with TopicRoute, sends a request to another broker
	// and waits for its answer: a static topic's pulls and offset
	// requests on a mapping item held by another broker go there, as
	// Java's RpcClient sends them. Nil: they answer SYSTEM_ERROR.
	Forward func(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
	// Users is the user table the AUTH_*_USER requests manage (users.go);
	// nil: they are not served.
	Users *auth.Users
	// ACLs is the ACL table the AUTH_*_ACL requests manage (acls.go).
	ACLs *auth.ACLs
	// HARuntime reports the replication state GET_BROKER_HA_STATUS
	// answers (admin_ha.go); nil: that code answers SYSTEM_ERROR.
	HARuntime func() protocol.HARuntimeInfo
	// Role is the broker's role now (it changes at runtime: internal/
	// broker/role); nil: Config.BrokerRole for good.
	Role func() config.BrokerRole
	// Pop serves POP consumption (pop.go); nil: its codes are not served.
	Pop *pop.Service
	// TimerCheckpoint reports the timer service's saved progress for
	// GET_TIMER_CHECK_POINT (admin_timer.go); nil or false: no timer
	// service (a slave).
	TimerCheckpoint func() (protocol.TimerCheckpoint, bool)
	// TimerMetrics reports the timer messages held per topic for
	// GET_TIMER_METRICS; nil or false: no timer service.
	TimerMetrics func() (protocol.TimerMetrics, bool)
	// TimerRecall recalls a held timer message (timer.Service.Recall) for
	// RECALL_MESSAGE (recall.go); nil or false: no timer service.
	TimerRecall func(topic, uniqKey string, deliverMs int64) (timer.RecallStatus, bool)
	Logger      *slog.Logger // default: discard

	// Stats counts puts and pulls (stats.go) and answers the runtime
	// statistics. Nil counts nothing: only for benchmarks.
	Stats *stats.Stats
	// RuntimeExtras, when set, adds the keys of the broker's other
	// services to GET_BROKER_RUNTIME_INFO (Java's
	// ScheduleMessageService.buildRunningStats, the timer figures).
	RuntimeExtras func(kv map[string]string)
}

// SendHook observes send requests (SEND_MESSAGE, SEND_MESSAGE_V2,
// SEND_BATCH_MESSAGE). Both methods run on the send worker and must be
// quick; neither may keep h or resp after returning.
type SendHook interface {
	// BeforeSend runs once the header decoded, before any check.
	BeforeSend(conn *remoting.Conn, h *protocol.SendMessageRequestHeader)
	// AfterSend runs with the response about to be written (any code).
	// Its custom header is typed (resp.Header): read it with resp.Ext()
	// or resp.ExtField.
	AfterSend(conn *remoting.Conn, h *protocol.SendMessageRequestHeader, resp *remoting.Command)
}

// Families are the worker pools the request codes run on (Java's
// per-processor executors). A nil family runs its handlers on the
// connection's reader goroutine: only for tests.
type Families struct {
	Send, Pull, Offset, Client, Admin *remoting.Family
	Reply                             *remoting.Family // SEND_REPLY_MESSAGE; nil: Send's
}

// family is one request family: a type holding only the dependencies its
// handlers use, which routes its own codes. A new family plugs in as one
// type and one line in New.
type family interface {
	register(srv *remoting.Server, pools Families)
}

// Processor serves the broker's request codes: the composition of the
// families, built from Deps by New and routed by Register. It holds no
// dependency itself; its exported methods (local.go) call a family.
type Processor struct {
	sends   *sendFamily
	pulls   *pullFamily
	offsets *offsetFamily
	clients *clientFamily
	pops    *popFamily

	// families in registration order: every family, the above included.
	families []family
}

// New returns a Processor over d. Config, Store, Topics, Groups, Offsets and
// Clients are required.
func New(d Deps) (*Processor, error) {
	if d.Config == nil || d.Store == nil || d.Topics == nil || d.Groups == nil || d.Offsets == nil || d.Clients == nil {
		return nil, errors.New("processor: Config, Store, Topics, Groups, Offsets and Clients are required")
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	rt := d.Live
	if rt == nil {
		rt = config.NewBrokerRuntime(d.Config, "")
	}
	b := base{cfg: d.Config, rt: rt, role: d.Role, log: log}
	// Shared by several families.
	static := &staticRW{log: log, store: d.Store, offsets: d.Offsets, mappings: d.Mappings, route: d.TopicRoute, forwardFn: d.Forward}
	fs := &filters{base: b, clients: d.Clients}

	p := &Processor{
		sends: newSendFamily(b, d),
		pulls: &pullFamily{base: b, store: d.Store, topics: d.Topics, groups: d.Groups, offsets: d.Offsets, clients: d.Clients,
			holder: d.Holder, storeHost: d.StoreHost, stats: d.Stats, static: static, filters: fs},
		offsets: &offsetFamily{base: b, store: d.Store, offsets: d.Offsets, inMemory: d.InMemoryBytes, static: static},
		clients: &clientFamily{base: b, clients: d.Clients, groups: d.Groups, topics: d.Topics, modes: d.RequestModes,
			route: d.TopicRoute, filters: fs},
		pops: &popFamily{base: b, pop: d.Pop, holder: d.Holder, topics: d.Topics, groups: d.Groups, filters: fs},
	}
	p.families = []family{p.sends, p.pulls, p.offsets, p.clients, p.pops,
		&authFamily{log: log, users: d.Users, acls: d.ACLs},
		&topicAdmin{base: b, store: d.Store, topics: d.Topics, offsets: d.Offsets, mappings: d.Mappings, awaitReg: d.AwaitRegistration},
		&groupAdmin{base: b, groups: d.Groups, offsets: d.Offsets, modes: d.RequestModes},
		&consumerAdmin{base: b, store: d.Store, topics: d.Topics, groups: d.Groups, offsets: d.Offsets, clients: d.Clients,
			storeHost: d.StoreHost, stats: d.Stats},
		&brokerAdmin{base: b, store: d.Store, stats: d.Stats, extras: d.RuntimeExtras, haRuntime: d.HARuntime,
			timerCheckpoint: d.TimerCheckpoint, timerMetrics: d.TimerMetrics},
		&storeAdmin{log: log, store: d.Store, topics: d.Topics},
		&messageAdmin{base: b, store: d.Store, txn: d.Txn},
	}
	return p, nil
}

// Register routes every request code this package serves on srv: each
// family's, then the default processor on the admin pool.
func (p *Processor) Register(srv *remoting.Server, f Families) {
	for _, fam := range p.families {
		fam.register(srv, f)
	}
	srv.HandleDefault(f.Admin, notSupported)
}

// notSupported is the admin processor's answer to a code nobody serves
// (rocketmq-spec.md §1.7: the remark has a leading space). A code refused
// on purpose (protocol.RequestCodeMap) also says why.
func notSupported(_ *remoting.Conn, req *remoting.Command) *remoting.Command {
	remark := fmt.Sprintf(" request type %d not supported", req.Code)
	if c, ok := protocol.LookupRequestCode(req.Code); ok && c.Status == protocol.CodeRefused {
		remark += ": " + c.Note
	}
	return remoting.NewResponse(protocol.RequestCodeNotSupported, remark)
}

// headerError answers a request whose header does not decode: Java's
// processors throw, which the transport turns into SYSTEM_ERROR.
func headerError(err error) *remoting.Command {
	return remoting.NewResponse(protocol.SystemError, err.Error())
}

// ok returns a SUCCESS response carrying h.
func ok(h protocol.ExtHeader) *remoting.Command {
	resp := remoting.NewResponse(protocol.Success, "")
	if h != nil {
		resp.ExtFields = protocol.Ext(h)
	}
	return resp
}

// bodyResponse returns a SUCCESS response with a fastjson body.
func bodyResponse(v any) *remoting.Command {
	body, err := protocol.MarshalFastJSON(v)
	if err != nil {
		return remoting.ErrorResponse(fmt.Errorf("processor: encode body: %w", err))
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}

// randomQueue picks a queue id in [0, n) for a request that named none.
func randomQueue(n int32) int32 {
	if n <= 1 {
		return 0
	}
	return rand.Int32N(n)
}
