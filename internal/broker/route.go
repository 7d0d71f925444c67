package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rocketd/rocketd/internal/protocol"
	"github.com/rocketd/rocketd/internal/remoting"
)

// routeLookupTimeout bounds one GET_ROUTEINFO_BY_TOPIC to a NameServer
// for QUERY_ASSIGNMENT (Java's TopicRouteInfoManager waits 3 s; the
// client's QUERY_ASSIGNMENT itself times out after 3 s).
const routeLookupTimeout = 2 * time.Second

// routeAttemptsPerNamesrv bounds the calls to one NameServer per lookup:
// a connection that breaks mid-request (the NameServer closed it idle,
// or restarted) is dropped and the request sent again once on a fresh
// one, as Java's client closes a broken channel and the next call dials;
// any other failure moves on to the next NameServer.
const routeAttemptsPerNamesrv = 2

// topicRoute asks the NameServers, one after the other until one answers,
// for topic's route: QUERY_ASSIGNMENT splits the queues of every broker of
// the topic, as Java's (TopicRouteInfoManager). found is false when the
// NameServer answers TOPIC_NOT_EXIST. No cache: a consumer asks once per
// topic per rebalance (20 s), and the answer must follow topic changes.
func (b *Broker) topicRoute(ctx context.Context, topic string) (route protocol.TopicRouteData, found bool, err error) {
	return routeFromNamesrv(ctx, b.nsClient, b.cfg.NamesrvAddrs(), topic)
}

// routeFromNamesrv is topicRoute over client and the NameServers addrs.
// GET_ROUTEINFO_BY_TOPIC is a read, so sending it again after a broken
// connection is safe.
func routeFromNamesrv(ctx context.Context, client *remoting.Client, addrs []string, topic string) (route protocol.TopicRouteData, found bool, err error) {
	h := protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}
	var errs []error
	for _, addr := range addrs {
		for attempt := 1; attempt <= routeAttemptsPerNamesrv; attempt++ {
			cctx, cancel := context.WithTimeout(ctx, routeLookupTimeout)
			resp, err := client.Invoke(cctx, addr, remoting.NewRequest(protocol.GetRouteinfoByTopic, protocol.Ext(&h), nil))
			cancel()
			switch {
			case err != nil:
				errs = append(errs, fmt.Errorf("namesrv %s (attempt %d): %w", addr, attempt, err))
				if errors.Is(err, remoting.ErrConnClosed) && ctx.Err() == nil {
					continue // a fresh connection: Invoke dials again
				}
			case resp.Code == protocol.TopicNotExist:
				return route, false, nil
			case resp.Code != protocol.Success:
				errs = append(errs, fmt.Errorf("namesrv %s: code %d %s", addr, resp.Code, resp.Remark))
			default:
				err := protocol.UnmarshalFastJSON(resp.Body, &route)
				if err == nil {
					return route, true, nil
				}
				errs = append(errs, fmt.Errorf("namesrv %s: route of %s: %w", addr, topic, err))
			}
			break // not a broken connection: the next NameServer
		}
	}
	if len(errs) == 0 {
		return route, false, errors.New("broker: no NameServer address")
	}
	return route, false, fmt.Errorf("broker: route of %s: %w", topic, errors.Join(errs...))
}
