package namesrv

import (
	"fmt"
	"hash/crc32"
	"strings"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// Requests brokers send: REGISTER_BROKER, UNREGISTER_BROKER,
// QUERY_DATA_VERSION; and the operator's WIPE/ADD_WRITE_PERM_OF_BROKER.

// missingFields returns a SYSTEM_ERROR response naming the required extFields
// keys absent from req, or nil when all are there. Java fails later with a
// NullPointerException for these; a clear remark is kinder.
func missingFields(req *remoting.Command, header string, keys ...string) *remoting.Command {
	var missing []string
	for _, k := range keys {
		if _, ok := req.ExtFields[k]; !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return remoting.NewResponse(protocol.SystemError,
		fmt.Sprintf("%s: missing required field(s) %s", header, strings.Join(missing, ", ")))
}

// decodeHeader decodes req's extFields into h and checks the required keys.
// It returns the error response to send, or nil.
func decodeHeader(req *remoting.Command, h protocol.ExtHeader, name string, required ...string) *remoting.Command {
	if resp := missingFields(req, name, required...); resp != nil {
		return resp
	}
	if err := h.Decode(req.ExtFields); err != nil {
		return remoting.ErrorResponse(err)
	}
	return nil
}

// bodyCRC is the masked CRC32 RocketMQ puts in bodyCrc32.
func bodyCRC(body []byte) int32 { return int32(crc32.ChecksumIEEE(body) & 0x7FFFFFFF) }

func (s *Server) registerBroker(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.RegisterBrokerRequestHeader
	if resp := decodeHeader(req, &h, "RegisterBrokerRequestHeader",
		"brokerName", "brokerAddr", "clusterName", "brokerId"); resp != nil {
		return resp
	}
	if h.BodyCrc32 != 0 && bodyCRC(req.Body) != h.BodyCrc32 {
		s.log.Warn("namesrv: register broker: body crc mismatch", "broker", h.BrokerAddr,
			"header", h.BodyCrc32, "computed", bodyCRC(req.Body))
		return remoting.NewResponse(protocol.SystemError, "crc32 not match")
	}

	reg := Registration{
		ClusterName:  h.ClusterName,
		BrokerName:   h.BrokerName,
		BrokerAddr:   h.BrokerAddr,
		BrokerID:     h.BrokerID,
		HAServerAddr: h.HAServerAddr,
	}
	if conn != nil {
		reg.Conn = conn // a typed nil would be an untracked connection that is not nil
	}
	// An empty body registers membership only, with data version 0/0 (Java
	// does the same for a null body).
	if len(req.Body) > 0 {
		body, err := protocol.DecodeRegisterBrokerBody(req.Body, h.Compressed, req.Version)
		if err != nil {
			return remoting.NewResponse(protocol.SystemError, "register broker: bad body: "+err.Error())
		}
		w := &body.TopicConfigSerializeWrapper
		reg.DataVersion = DataVersion{Timestamp: w.DataVersion.Timestamp, Counter: w.DataVersion.Counter}
		reg.Body, reg.Mappings = true, w.TopicQueueMappingInfoMap
		reg.Topics = make([]TopicConfig, 0, len(w.TopicConfigTable))
		for name, tc := range w.TopicConfigTable {
			if tc.TopicName == "" {
				tc.TopicName = name
			}
			reg.Topics = append(reg.Topics, TopicConfig{
				TopicName:      tc.TopicName,
				ReadQueueNums:  tc.ReadQueueNums,
				WriteQueueNums: tc.WriteQueueNums,
				Perm:           tc.Perm,
				TopicSysFlag:   tc.TopicSysFlag,
			})
		}
	}
	res := s.table.Register(reg, s.now())
	if conn != nil {
		select {
		case <-conn.Closed():
			// The connection closed while the request waited for a worker:
			// its close callback may already have run, so drop the broker
			// here rather than keep it until the expiry scan.
			s.table.RemoveConn(conn)
		default:
		}
	}
	s.log.Debug("namesrv: broker registered", "cluster", h.ClusterName, "name", h.BrokerName,
		"id", h.BrokerID, "addr", h.BrokerAddr, "topics", len(reg.Topics), "remote", remoteAddr(conn))

	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.RegisterBrokerResponseHeader{
		HAServerAddr: res.HAServerAddr,
		MasterAddr:   res.MasterAddr,
	})
	if kv, ok := s.kv.List(OrderTopicConfigNamespace); ok {
		body, err := protocol.MarshalFastJSON(&protocol.KVTable{Table: kv})
		if err != nil {
			return remoting.ErrorResponse(err)
		}
		resp.Body = body
	}
	return resp
}

func (s *Server) unregisterBroker(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.UnregisterBrokerRequestHeader
	if resp := decodeHeader(req, &h, "UnRegisterBrokerRequestHeader",
		"brokerName", "brokerAddr", "clusterName", "brokerId"); resp != nil {
		return resp
	}
	s.table.Unregister(Unregistration{
		ClusterName: h.ClusterName,
		BrokerName:  h.BrokerName,
		BrokerAddr:  h.BrokerAddr,
		BrokerID:    h.BrokerID,
	})
	s.log.Info("namesrv: broker unregistered", "cluster", h.ClusterName, "name", h.BrokerName,
		"id", h.BrokerID, "addr", h.BrokerAddr)
	return remoting.NewResponse(protocol.Success, "")
}

func (s *Server) queryDataVersion(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.QueryDataVersionRequestHeader
	if resp := decodeHeader(req, &h, "QueryDataVersionRequestHeader", "brokerAddr"); resp != nil {
		return resp
	}
	if len(req.Body) == 0 {
		return remoting.NewResponse(protocol.SystemError, "query data version: missing DataVersion body")
	}
	var dv protocol.DataVersion
	if err := protocol.UnmarshalFastJSON(req.Body, &dv); err != nil {
		return remoting.NewResponse(protocol.SystemError, "query data version: bad body: "+err.Error())
	}
	changed, cur, known := s.table.DataVersionChanged(h.BrokerAddr,
		DataVersion{Timestamp: dv.Timestamp, Counter: dv.Counter}, s.now())
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.QueryDataVersionResponseHeader{Changed: changed})
	if known {
		body, err := protocol.MarshalFastJSON(&protocol.DataVersion{Timestamp: cur.Timestamp, Counter: cur.Counter})
		if err != nil {
			return remoting.ErrorResponse(err)
		}
		resp.Body = body
	}
	return resp
}

func (s *Server) wipeWritePerm(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.WipeWritePermOfBrokerRequestHeader
	if resp := decodeHeader(req, &h, "WipeWritePermOfBrokerRequestHeader", "brokerName"); resp != nil {
		return resp
	}
	n := s.table.WipeWritePerm(h.BrokerName)
	s.log.Info("namesrv: wiped write permission", "broker", h.BrokerName, "topics", n, "remote", remoteAddr(conn))
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.WipeWritePermOfBrokerResponseHeader{WipeTopicCount: int32(n)})
	return resp
}

func (s *Server) addWritePerm(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.AddWritePermOfBrokerRequestHeader
	if resp := decodeHeader(req, &h, "AddWritePermOfBrokerRequestHeader", "brokerName"); resp != nil {
		return resp
	}
	n := s.table.AddWritePerm(h.BrokerName)
	s.log.Info("namesrv: added write permission", "broker", h.BrokerName, "topics", n, "remote", remoteAddr(conn))
	resp := remoting.NewResponse(protocol.Success, "")
	resp.ExtFields = protocol.Ext(&protocol.AddWritePermOfBrokerResponseHeader{AddTopicCount: int32(n)})
	return resp
}

// remoteAddr names the peer of conn for logs; handlers called without a
// connection (tests, fuzzing) get "".
func remoteAddr(conn *remoting.Conn) string {
	if conn == nil {
		return ""
	}
	return conn.RemoteAddr()
}
