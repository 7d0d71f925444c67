package console

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rocketd/rocketd/internal/admin"
	"github.com/rocketd/rocketd/internal/protocol"
)

// routes is the console's mux (doc.go lists the routes).
func (s *Server) routes(static fs.FS) http.Handler {
	mux := http.NewServeMux()
	files := http.FileServerFS(static)
	for _, f := range []string{"/{$}", "/app.js", "/style.css"} {
		mux.Handle("GET "+f, files)
	}
	mux.HandleFunc("GET /api/cluster", s.getCluster)
	mux.HandleFunc("GET /api/throughput", s.getThroughput)
	mux.HandleFunc("GET /api/topics", s.getTopics)
	mux.HandleFunc("GET /api/topic", s.getTopic)
	mux.HandleFunc("POST /api/topics", s.write(s.postTopic))
	mux.HandleFunc("GET /api/groups", s.getGroups)
	mux.HandleFunc("GET /api/group", s.getGroup)
	mux.HandleFunc("POST /api/group/reset", s.write(s.postReset))
	mux.HandleFunc("GET /api/message", s.getMessage)
	mux.HandleFunc("GET /api/messages", s.getMessagesByKey)
	mux.HandleFunc("GET /api/message/at", s.getMessageAt)
	mux.HandleFunc("GET /api/dlq", s.getDLQ)
	mux.HandleFunc("POST /api/dlq/resend", s.write(s.postResend))
	mux.HandleFunc("GET /api/backlog", s.getBacklog)
	loopback := isLoopbackListen(s.cfg.ListenAddr)
	return secureHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if loopback && !hostAllowed(r.Host) {
			writeError(w, http.StatusMisdirectedRequest, "host "+r.Host+" is not this console's address")
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

// write wraps a write action: the CSRF check, then the handler.
func (s *Server) write(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if status, reason := checkWrite(r); status != 0 {
			writeError(w, status, reason)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		h(w, r)
	}
}

// readJSON decodes a write action's body into v; false after answering
// 400 or 413.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("body over %d bytes", tooBig.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, "bad JSON body: "+err.Error())
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

type apiError struct {
	Error string `json:"error"`
	Code  *int32 `json:"code,omitempty"` // the broker's response code
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(apiError{Error: msg})
}

// writeAdminError maps an admin call's failure: "not found" statuses are
// 404, other broker statuses and transport failures 502.
func writeAdminError(w http.ResponseWriter, err error) {
	var se *admin.StatusError
	status := http.StatusBadGateway
	e := apiError{Error: err.Error()}
	if errors.As(err, &se) {
		e.Code = &se.Code
		switch se.Code {
		case protocol.TopicNotExist, protocol.QueryNotFound, protocol.NoMessage, protocol.ConsumerNotOnline,
			protocol.SubscriptionGroupNotExist:
			status = http.StatusNotFound
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(e)
}

// param returns a required query parameter; "" after answering 400.
func param(w http.ResponseWriter, r *http.Request, name string) string {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		writeError(w, http.StatusBadRequest, "missing parameter "+name)
	}
	return v
}

// intParam parses an optional integer parameter (def when absent).
func intParam(w http.ResponseWriter, r *http.Request, name string, def int64) (int64, bool) {
	v := strings.TrimSpace(r.URL.Query().Get(name))
	if v == "" {
		return def, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		writeError(w, http.StatusBadRequest, "parameter "+name+": not an integer: "+strconv.Quote(v))
		return 0, false
	}
	return n, true
}

// validName is RocketMQ's topic and group character set (TopicValidator).
func validName(s string) bool {
	if s == "" || len(s) > 127 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '%' || c == '|' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func sortBy[T any](s []T, key func(T) string) {
	slices.SortFunc(s, func(a, b T) int { return strings.Compare(key(a), key(b)) })
}

// --- cluster ---

type brokerView struct {
	Cluster string            `json:"cluster"`
	Name    string            `json:"name"`
	Addrs   map[string]string `json:"addrs"` // broker id -> address
	Runtime map[string]string `json:"runtime,omitempty"`
	Error   string            `json:"error,omitempty"`
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request) {
	ci, err := s.admin.ClusterInfo(r.Context())
	if err != nil {
		writeAdminError(w, err)
		return
	}
	var out []brokerView
	for name, bd := range ci.BrokerAddrTable {
		v := brokerView{Cluster: bd.Cluster, Name: name, Addrs: map[string]string{}}
		for id, a := range bd.BrokerAddrs {
			v.Addrs[strconv.FormatInt(id, 10)] = a
		}
		if addr := bd.MasterAddr(); addr != "" {
			if v.Runtime, err = s.admin.BrokerRuntimeInfo(r.Context(), addr); err != nil {
				v.Error = err.Error()
			}
		}
		out = append(out, v)
	}
	sortBy(out, func(b brokerView) string { return b.Cluster + "/" + b.Name })
	writeJSON(w, map[string]any{"brokers": out, "clusters": ci.ClusterAddrTable})
}

func (s *Server) getThroughput(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, map[string]any{"intervalMs": s.cfg.SampleInterval.Milliseconds(), "series": s.sampler.series()})
}

// --- topics ---

func (s *Server) getTopics(w http.ResponseWriter, r *http.Request) {
	topics, err := s.admin.TopicList(r.Context())
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"topics": topics})
}

func (s *Server) getTopic(w http.ResponseWriter, r *http.Request) {
	topic := param(w, r, "topic")
	if topic == "" {
		return
	}
	route, err := s.admin.TopicRoute(r.Context(), topic)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	stats, err := s.admin.TopicStats(r.Context(), topic)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	if stats == nil {
		stats = []admin.QueueStat{}
	}
	groups, err := s.admin.TopicConsumers(r.Context(), topic)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"topic": topic, "route": route, "queues": stats, "consumers": groups})
}

type createTopicRequest struct {
	Topic       string `json:"topic"`
	Cluster     string `json:"cluster"`
	ReadQueues  int32  `json:"readQueues"`
	WriteQueues int32  `json:"writeQueues"`
	Perm        int32  `json:"perm"`
	Order       bool   `json:"order"`
}

// maxQueues bounds the queue counts the console asks for (a typo of 80000
// queues would create 80000 files per broker).
const maxQueues = 1024

func (s *Server) postTopic(w http.ResponseWriter, r *http.Request) {
	var req createTopicRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !validName(req.Topic) {
		writeError(w, http.StatusBadRequest, "topic: want 1-127 characters of [A-Za-z0-9%|_-]")
		return
	}
	if req.ReadQueues < 1 || req.WriteQueues < 1 || req.ReadQueues > maxQueues || req.WriteQueues > maxQueues {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("readQueues and writeQueues must be 1..%d", maxQueues))
		return
	}
	if req.Perm != 0 && (req.Perm&^(admin.PermRead|admin.PermWrite|1) != 0) {
		writeError(w, http.StatusBadRequest, "perm: want a combination of 2 (write), 4 (read) and 1 (inherit)")
		return
	}
	brokers, err := s.admin.CreateTopic(r.Context(), admin.TopicSpec{Name: req.Topic, Cluster: req.Cluster,
		ReadQueues: req.ReadQueues, WriteQueues: req.WriteQueues, Perm: req.Perm, Order: req.Order})
	if err != nil {
		writeAdminError(w, err)
		return
	}
	s.log.Info("console: topic created", "topic", req.Topic, "brokers", brokers, "remote", r.RemoteAddr)
	writeJSON(w, map[string]any{"topic": req.Topic, "brokers": brokers})
}

// --- groups ---

func (s *Server) getGroups(w http.ResponseWriter, r *http.Request) {
	groups, err := s.admin.Groups(r.Context())
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"groups": groups})
}

func (s *Server) getGroup(w http.ResponseWriter, r *http.Request) {
	group := param(w, r, "group")
	if group == "" {
		return
	}
	progress, tps, err := s.admin.ConsumeStats(r.Context(), group, r.URL.Query().Get("topic"))
	if err != nil {
		writeAdminError(w, err)
		return
	}
	if progress == nil {
		progress = []admin.QueueProgress{}
	}
	var lag int64
	for _, p := range progress {
		lag += p.Lag
	}
	out := map[string]any{"group": group, "progress": progress, "totalLag": lag, "consumeTps": tps,
		"members": []protocol.Connection{}, "subscriptions": map[string]protocol.SubscriptionData{}}
	cc, err := s.admin.ConsumerConnections(r.Context(), group)
	switch {
	case err == nil:
		out["members"], out["subscriptions"] = cc.ConnectionSet, cc.SubscriptionTable
		out["consumeType"], out["messageModel"] = cc.ConsumeType, cc.MessageModel
	case admin.IsCode(err, protocol.ConsumerNotOnline):
		out["online"] = false
	default:
		out["membersError"] = err.Error()
	}
	writeJSON(w, out)
}

type resetRequest struct {
	Group     string `json:"group"`
	Topic     string `json:"topic"`
	Timestamp int64  `json:"timestamp"` // ms; -1: the queues' ends
}

func (s *Server) postReset(w http.ResponseWriter, r *http.Request) {
	var req resetRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !validName(req.Group) || !validName(req.Topic) {
		writeError(w, http.StatusBadRequest, "group and topic: want 1-127 characters of [A-Za-z0-9%|_-]")
		return
	}
	if req.Timestamp < -1 {
		writeError(w, http.StatusBadRequest, "timestamp: want ms since the epoch, or -1 for the queues' ends")
		return
	}
	brokers, err := s.admin.ResetOffsetByTime(r.Context(), req.Group, req.Topic, req.Timestamp)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	s.log.Info("console: offsets reset", "group", req.Group, "topic", req.Topic, "timestamp", req.Timestamp, "brokers", brokers, "remote", r.RemoteAddr)
	writeJSON(w, map[string]any{"group": req.Group, "topic": req.Topic, "brokers": brokers})
}

// --- messages ---

// messageView is admin.Message with its body for a browser: text when it
// is valid UTF-8, else base64.
type messageView struct {
	*admin.Message
	BodyEncoding string `json:"bodyEncoding"` // "text" or "base64"
	Body         string `json:"body"`
	BodySize     int    `json:"bodySize"`
}

func viewOf(m *admin.Message) messageView {
	v := messageView{Message: m, BodySize: len(m.Body)}
	if utf8.Valid(m.Body) {
		v.BodyEncoding, v.Body = "text", string(m.Body)
	} else {
		v.BodyEncoding, v.Body = "base64", base64.StdEncoding.EncodeToString(m.Body)
	}
	return v
}

func viewsOf(ms []*admin.Message) []messageView {
	out := make([]messageView, 0, len(ms))
	for _, m := range ms {
		out = append(out, viewOf(m))
	}
	return out
}

func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	topic := param(w, r, "topic")
	if topic == "" {
		return
	}
	id := param(w, r, "msgId")
	if id == "" {
		return
	}
	m, err := s.admin.ViewMessage(r.Context(), topic, id)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"messages": []messageView{viewOf(m)}})
}

func (s *Server) getMessagesByKey(w http.ResponseWriter, r *http.Request) {
	topic := param(w, r, "topic")
	if topic == "" {
		return
	}
	key := param(w, r, "key")
	if key == "" {
		return
	}
	ms, err := s.admin.QueryMessageByKey(r.Context(), topic, key)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"messages": viewsOf(ms)})
}

func (s *Server) getMessageAt(w http.ResponseWriter, r *http.Request) {
	topic := param(w, r, "topic")
	if topic == "" {
		return
	}
	queue, ok := intParam(w, r, "queue", -1)
	if !ok {
		return
	}
	offset, ok := intParam(w, r, "offset", -1)
	if !ok {
		return
	}
	if queue < 0 || queue > 65535 || offset < 0 {
		writeError(w, http.StatusBadRequest, "queue and offset: want non-negative integers")
		return
	}
	m, err := s.admin.MessageAt(r.Context(), topic, r.URL.Query().Get("broker"), int32(queue), offset)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	writeJSON(w, map[string]any{"messages": []messageView{viewOf(m)}})
}

// --- DLQ ---

// dlqPage bounds one DLQ listing per broker.
const dlqPage = 50

func (s *Server) getDLQ(w http.ResponseWriter, r *http.Request) {
	group := param(w, r, "group")
	if group == "" {
		return
	}
	if !validName(group) {
		writeError(w, http.StatusBadRequest, "group: want 1-127 characters of [A-Za-z0-9%|_-]")
		return
	}
	topic := "%DLQ%" + group
	route, err := s.admin.TopicRoute(r.Context(), topic)
	if admin.IsCode(err, protocol.TopicNotExist) {
		// No message was ever dead-lettered (the dashboard's answer too).
		writeJSON(w, map[string]any{"topic": topic, "messages": []messageView{}})
		return
	}
	if err != nil {
		writeAdminError(w, err)
		return
	}
	var msgs []*admin.Message
	for _, qd := range route.QueueDatas {
		for q := int32(0); q < qd.ReadQueueNums; q++ {
			got, err := s.queueTail(r.Context(), topic, qd.BrokerName, q)
			if err != nil {
				writeAdminError(w, err)
				return
			}
			msgs = append(msgs, got...)
		}
	}
	writeJSON(w, map[string]any{"topic": topic, "messages": viewsOf(msgs)})
}

// queueTail returns the last dlqPage messages of a queue.
func (s *Server) queueTail(ctx context.Context, topic, broker string, queueID int32) ([]*admin.Message, error) {
	addr, err := s.masterAddr(ctx, broker)
	if err != nil {
		return nil, err
	}
	minOff, maxOff, err := s.admin.QueueOffsets(ctx, addr, topic, queueID)
	if err != nil || maxOff <= minOff {
		return nil, err
	}
	from := max(minOff, maxOff-dlqPage)
	return s.admin.QueueMessages(ctx, topic, broker, queueID, from, int32(maxOff-from))
}

func (s *Server) masterAddr(ctx context.Context, broker string) (string, error) {
	masters, err := s.admin.Masters(ctx, "")
	if err != nil {
		return "", err
	}
	for _, b := range masters {
		if b.Name == broker && b.Addr != "" {
			return b.Addr, nil
		}
	}
	return "", fmt.Errorf("console: broker %s has no master", broker)
}

type resendRequest struct {
	Group    string `json:"group"`
	MsgID    string `json:"msgId"`
	ClientID string `json:"clientId"`
}

func (s *Server) postResend(w http.ResponseWriter, r *http.Request) {
	var req resendRequest
	if !readJSON(w, r, &req) {
		return
	}
	if !validName(req.Group) || req.MsgID == "" {
		writeError(w, http.StatusBadRequest, "group and msgId are required")
		return
	}
	res, err := s.admin.ConsumeMessageDirectly(r.Context(), req.Group, req.ClientID, "%DLQ%"+req.Group, req.MsgID)
	if err != nil {
		writeAdminError(w, err)
		return
	}
	s.log.Info("console: DLQ message re-sent", "group", req.Group, "msgId", req.MsgID, "client", res.ClientID,
		"result", res.ConsumeResult, "remote", r.RemoteAddr)
	writeJSON(w, res)
}
