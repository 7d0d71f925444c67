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

// topicRoute asks the NameServers, one after the other until one answers,
// for topic's route: QUERY_ASSIGNMENT splits the queues of every broker of
// the topic, as Java's (TopicRouteInfoManager). found is false when the
// NameServer answers TOPIC_NOT_EXIST. No cache: a consumer asks once per
// topic per rebalance (20 s), and the answer must follow topic changes.
func (b *Broker) topicRoute(ctx context.Context, topic string) (route protocol.TopicRouteData, found bool, err error) {
	h := protocol.GetRouteInfoRequestHeader{Topic: topic, AcceptStandardJSONOnly: true}
	var errs []error
	for _, addr := range b.cfg.NamesrvAddrs() {
		cctx, cancel := context.WithTimeout(ctx, routeLookupTimeout)
		resp, err := b.nsClient.Invoke(cctx, addr, remoting.NewRequest(protocol.GetRouteinfoByTopic, protocol.Ext(&h), nil))
		cancel()
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("namesrv %s: %w", addr, err))
		case resp.Code == protocol.TopicNotExist:
			return route, false, nil
		case resp.Code != protocol.Success:
			errs = append(errs, fmt.Errorf("namesrv %s: code %d %s", addr, resp.Code, resp.Remark))
		default:
			if err := protocol.UnmarshalFastJSON(resp.Body, &route); err != nil {
				errs = append(errs, fmt.Errorf("namesrv %s: route of %s: %w", addr, topic, err))
				continue
			}
			return route, true, nil
		}
	}
	if len(errs) == 0 {
		return route, false, errors.New("broker: no NameServer address")
	}
	return route, false, fmt.Errorf("broker: route of %s: %w", topic, errors.Join(errs...))
}
