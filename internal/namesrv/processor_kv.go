package namesrv

import (
	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// KV configuration requests: PUT/GET/DELETE_KV_CONFIG,
// GET_KVLIST_BY_NAMESPACE.

func (s *Server) putKVConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.PutKVConfigRequestHeader
	if resp := decodeHeader(req, &h, "PutKVConfigRequestHeader", "namespace", "key", "value"); resp != nil {
		return resp
	}
	if err := s.kv.Put(h.Namespace, h.Key, h.Value); err != nil {
		// The value is in memory; only the file lags. Say so rather than
		// pretend nothing happened.
		s.log.Error("namesrv: kv config not persisted", "err", err)
		return remoting.ErrorResponse(err)
	}
	s.log.Info("namesrv: kv config put", "namespace", h.Namespace, "key", h.Key, "remote", remoteAddr(conn))
	return remoting.NewResponse(protocol.Success, "")
}

func (s *Server) getKVConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetKVConfigRequestHeader
	if resp := decodeHeader(req, &h, "GetKVConfigRequestHeader", "namespace", "key"); resp != nil {
		return resp
	}
	v, ok := s.kv.Get(h.Namespace, h.Key)
	if !ok {
		return remoting.NewResponse(protocol.QueryNotFound,
			"No config item, Namespace: "+h.Namespace+" Key: "+h.Key)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	// The value key is written even when the value is empty: the caller
	// asked for it and found it.
	resp.ExtFields = map[string]string{"value": v}
	return resp
}

func (s *Server) deleteKVConfig(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.DeleteKVConfigRequestHeader
	if resp := decodeHeader(req, &h, "DeleteKVConfigRequestHeader", "namespace", "key"); resp != nil {
		return resp
	}
	if err := s.kv.Delete(h.Namespace, h.Key); err != nil {
		s.log.Error("namesrv: kv config not persisted", "err", err)
		return remoting.ErrorResponse(err)
	}
	s.log.Info("namesrv: kv config deleted", "namespace", h.Namespace, "key", h.Key, "remote", remoteAddr(conn))
	return remoting.NewResponse(protocol.Success, "")
}

func (s *Server) getKVListByNamespace(conn *remoting.Conn, req *remoting.Command) *remoting.Command {
	var h protocol.GetKVListByNamespaceRequestHeader
	if resp := decodeHeader(req, &h, "GetKVListByNamespaceRequestHeader", "namespace"); resp != nil {
		return resp
	}
	kv, ok := s.kv.List(h.Namespace)
	if !ok {
		return remoting.NewResponse(protocol.QueryNotFound, "No config item, Namespace: "+h.Namespace)
	}
	body, err := protocol.MarshalFastJSON(&protocol.KVTable{Table: kv})
	if err != nil {
		return remoting.ErrorResponse(err)
	}
	resp := remoting.NewResponse(protocol.Success, "")
	resp.Body = body
	return resp
}
