package grpc

import (
	"context"
	"errors"
	"strings"
	"sync"

	v2 "github.com/apache/rocketmq-clients/golang/v5/protocol/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	pb "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/rocketd/rocketd/internal/auth"
	"google.golang.org/grpc/metadata"
)

// The metadata headers the SDKs sign requests with.
const (
	authorizationKey = "authorization"
	dateTimeKey      = "x-mq-date-time"
)

// errRefused ends a server-streaming handler whose request was refused:
// the refusal has been sent as the stream's status message.
var errRefused = errors.New("grpc: request refused")

// checkAuth authenticates m, one request message, from its call's
// headers and, with authorization on, authorizes the resources it names
// (Java's AuthenticationPipeline then AuthorizationPipeline, run for every
// request message). A refusal is UNAUTHORIZED with Java's remark: the
// proxy's ResponseBuilder answers both AuthenticationException and
// AuthorizationException so.
func (s *Server) checkAuth(ctx context.Context, method string, m pb.Message) *v2.Status {
	a := s.cfg.Auth
	md, _ := metadata.FromIncomingContext(ctx)
	subj, remark, ok := a.AuthenticateGRPC(firstValue(md, authorizationKey), firstValue(md, dateTimeKey))
	if ok {
		if z := a.Authorizer(); z != nil {
			var checks []auth.GRPCCheck
			if checks, remark = resourceChecks(m); remark == "" {
				remark, ok = z.AuthorizeGRPC(subj, checks, remoteString(ctx))
			} else {
				ok = false
			}
		}
	}
	if ok {
		return nil
	}
	a.LogGRPCRefusal(remoteString(ctx), method, remark)
	return status(v2.Code_UNAUTHORIZED, remark)
}

func firstValue(md metadata.MD, key string) string {
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// authUnary refuses a unary RPC with its response type carrying the
// refusal status, as Java's writeResponse does.
func (s *Server) authUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	m, ok := req.(pb.Message)
	if !ok {
		return nil, grpcstatus.Error(codes.Internal, "grpc: request is not a protobuf message")
	}
	if st := s.checkAuth(ctx, info.FullMethod, m); st != nil {
		return refusalResponse(info.FullMethod, st)
	}
	return handler(ctx, req)
}

// authStream checks every message the client sends on a stream: a
// refused ReceiveMessage request is answered with the status message and
// ends the stream; a refused Telemetry command is answered with a status
// command and the stream goes on, as Java's per-command onNext does.
func (s *Server) authStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	w := &authedStream{ServerStream: ss, s: s, method: info.FullMethod, clientStream: info.IsClientStream}
	err := handler(srv, w)
	if errors.Is(err, errRefused) {
		return nil
	}
	return err
}

// authedStream is a ServerStream whose received messages are checked. mu
// serializes the refusals it sends with the handler's sends.
type authedStream struct {
	grpc.ServerStream
	s            *Server
	method       string
	clientStream bool
	mu           sync.Mutex
}

func (w *authedStream) SendMsg(m any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ServerStream.SendMsg(m)
}

func (w *authedStream) RecvMsg(m any) error {
	for {
		if err := w.ServerStream.RecvMsg(m); err != nil {
			return err
		}
		pm, ok := m.(pb.Message)
		if !ok {
			return grpcstatus.Error(codes.Internal, "grpc: request is not a protobuf message")
		}
		st := w.s.checkAuth(w.Context(), w.method, pm)
		if st == nil {
			return nil
		}
		resp, err := refusalResponse(w.method, st)
		if err != nil {
			return err
		}
		if err := w.SendMsg(resp); err != nil {
			return err
		}
		if !w.clientStream {
			return errRefused
		}
		pb.Reset(pm)
	}
}

// refusalResponse is the response message of method (a full method name)
// with only its status set; every MessagingService response has one.
func refusalResponse(method string, st *v2.Status) (pb.Message, error) {
	name := method[strings.LastIndexByte(method, '/')+1:]
	md := v2.File_apache_rocketmq_v2_service_proto.Services().ByName("MessagingService").Methods().ByName(protoreflect.Name(name))
	if md == nil {
		return nil, grpcstatus.Error(codes.Unauthenticated, st.GetMessage())
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil, grpcstatus.Error(codes.Unauthenticated, st.GetMessage())
	}
	resp := mt.New()
	fd := resp.Descriptor().Fields().ByName("status")
	if fd == nil {
		return nil, grpcstatus.Error(codes.Unauthenticated, st.GetMessage())
	}
	resp.Set(fd, protoreflect.ValueOfMessage(st.ProtoReflect()))
	return resp.Interface(), nil
}
